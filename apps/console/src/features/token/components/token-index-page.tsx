import { useState } from 'react';
import Badge from 'react-bootstrap/Badge';
import Button from 'react-bootstrap/Button';
import Card from 'react-bootstrap/Card';
import Form from 'react-bootstrap/Form';
import { useTranslation } from 'react-i18next';
import type { OperationOutput, Operations } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { ConfirmModal } from '@/components/confirm-modal.tsx';
import { DataTableCard } from '@/components/data-table-card.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import { LinkButton } from '@/components/link-button.tsx';
import { classifyApiError, useApiErrorHandler, useReportQueryError } from '@/lib/api-errors.ts';
import { flash } from '@/lib/flash.ts';
import { formatDateTime } from '@/lib/format.ts';
import { useDeleteToken, useDisableToken, useTokens } from '@/features/token/api/token-api.ts';
import { TokenPermissionBadges } from './token-permission-badges.tsx';

type Token = OperationOutput<Operations['auth_token.list']>['authTokens'][number];

function TokenStatus({ token }: { token: Token }) {
  const { t } = useTranslation();
  const [bg, key] = token.deleted
    ? ['dark', 'token.deletedStatus']
    : token.enabled
      ? ['success', 'common.enabled']
      : ['secondary', 'common.disabled'];
  return (
    <Badge bg={bg} data-testid="token-status" data-enabled={token.enabled} data-deleted={token.deleted}>
      {t(key)}
    </Badge>
  );
}

/**
 * A row action waiting for the user's yes: disabling cannot be undone either (nothing enables a
 * token again). It stays set while the dialog fades out, so the dialog's text does not change.
 */
type Pending = { kind: 'disable' | 'delete'; token: Token; open: boolean };

export function TokenIndexPage() {
  const { t, i18n } = useTranslation();
  const handleError = useApiErrorHandler();
  const [showDeleted, setShowDeleted] = useState(false);
  const tokens = useTokens(showDeleted);
  const disable = useDisableToken();
  const remove = useDeleteToken();
  const [pending, setPending] = useState<Pending | null>(null);
  useReportQueryError(tokens.error);

  const disableToken = async (token: Token) => {
    try {
      await disable.mutateAsync({ authTokenID: token.authTokenID });
      flash.now({ variant: 'success', key: 'token.disabled', action: 'token' });
    } catch (error) {
      handleError(error, { action: 'token' });
    }
  };

  const deleteToken = async (token: Token) => {
    try {
      await remove.mutateAsync({ authTokenID: token.authTokenID });
      flash.now({ variant: 'success', key: 'token.deleted', action: 'token' });
    } catch (error) {
      // Session and input problems have their own handling; any other refusal is the spec's message.
      const kind = classifyApiError(error).kind;
      if (kind === 'message' || kind === 'internal') {
        flash.now({ variant: 'danger', key: 'error.tokenDeleteFailed', action: 'token' });
      } else {
        handleError(error, { action: 'token' });
      }
    }
  };

  const close = () => setPending((asked) => asked && { ...asked, open: false });
  const confirm = async () => {
    if (!pending) return;
    try {
      await (pending.kind === 'disable' ? disableToken(pending.token) : deleteToken(pending.token));
    } finally {
      close();
    }
  };

  const list = tokens.data?.authTokens ?? [];
  return (
    <>
      <PageHeader
        title={t('title.tokenIndex')}
        lead={t('token.lead')}
        actions={
          <>
            <LinkButton to={paths.apiReference()} variant="outline-secondary" testId="token-api-reference">
              {t('token.apiReference')}
            </LinkButton>
            <LinkButton to={paths.tokenNew()} variant="primary" testId="token-new">
              {t('token.issue')}
            </LinkButton>
          </>
        }
      />
      <DataTableCard
        query={tokens}
        rowCount={list.length}
        testId="token-table"
        empty={t('token.empty')}
        emptyTestId="token-empty"
        header={
          <Card.Header className="bg-body d-flex justify-content-end py-2">
            <Form.Check
              type="switch"
              id="token-show-deleted"
              checked={showDeleted}
              onChange={(event) => setShowDeleted(event.target.checked)}
              label={t('token.showDeleted')}
              data-testid="token-show-deleted"
            />
          </Card.Header>
        }
        columns={[
          t('token.description'),
          t('token.token'),
          t('token.permission'),
          t('token.status'),
          t('token.createdAt'),
        ]}
        actions
      >
        {list.map((token) => {
          const busy =
            (disable.isPending && disable.variables?.authTokenID === token.authTokenID) ||
            (remove.isPending && remove.variables?.authTokenID === token.authTokenID);
          return (
            <tr
              key={token.authTokenID}
              className={token.deleted ? 'text-body-secondary' : undefined}
              data-testid="token-row"
              data-token-id={token.authTokenID}
              data-description={token.description}
            >
              <td className="text-break">
                {token.description || <span className="text-body-secondary">{t('token.noDescription')}</span>}
              </td>
              <td>
                <code className="text-nowrap" data-testid="token-masked">
                  {token.token}
                </code>
              </td>
              <td>
                <TokenPermissionBadges mask={token.permission} />
              </td>
              <td>
                <TokenStatus token={token} />
              </td>
              <td className="text-nowrap small">{formatDateTime(token.createdAt, i18n.language)}</td>
              <td className="text-end text-nowrap">
                {!token.deleted && token.enabled && (
                  <Button
                    variant="outline-secondary"
                    size="sm"
                    disabled={busy}
                    onClick={() => setPending({ kind: 'disable', token, open: true })}
                    data-testid="token-disable"
                  >
                    {t('common.disable')}
                  </Button>
                )}
                {!token.deleted && (
                  <Button
                    variant="outline-danger"
                    size="sm"
                    className="ms-2"
                    disabled={busy}
                    onClick={() => setPending({ kind: 'delete', token, open: true })}
                    data-testid="token-delete"
                  >
                    {t('common.delete')}
                  </Button>
                )}
              </td>
            </tr>
          );
        })}
      </DataTableCard>
      <ConfirmModal
        show={pending?.open ?? false}
        title={t(pending?.kind === 'disable' ? 'token.disableTitle' : 'token.deleteTitle')}
        confirmLabel={t(pending?.kind === 'disable' ? 'common.disable' : 'common.delete')}
        busy={disable.isPending || remove.isPending}
        testId={pending?.kind === 'disable' ? 'token-disable' : 'token-delete'}
        onConfirm={() => void confirm()}
        onCancel={close}
      >
        <p>{t(pending?.kind === 'disable' ? 'token.disableConfirm' : 'token.deleteConfirm')}</p>
        {pending && (
          <p className="mb-0 small text-body-secondary">
            {pending.token.description || t('token.noDescription')} <code>{pending.token.token}</code>
          </p>
        )}
      </ConfirmModal>
    </>
  );
}
