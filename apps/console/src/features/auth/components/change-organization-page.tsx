import { useEffect } from 'react';
import Alert from 'react-bootstrap/Alert';
import Badge from 'react-bootstrap/Badge';
import Card from 'react-bootstrap/Card';
import ListGroup from 'react-bootstrap/ListGroup';
import Spinner from 'react-bootstrap/Spinner';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import type { Organization } from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { PageHeader } from '@/components/page-header.tsx';
import { useApiErrorHandler } from '@/lib/api-errors.ts';
import { useSession } from '@/lib/session.ts';
import { useChangeOrganization, useOrganizations } from '@/features/auth/api/auth-api.ts';

function OrganizationRow({
  organization,
  current,
  busy,
  onChoose,
}: {
  organization: Organization;
  current: boolean;
  busy: boolean;
  onChoose: () => void;
}) {
  const { t } = useTranslation();
  return (
    <ListGroup.Item
      action
      as="button"
      type="button"
      disabled={busy}
      active={current}
      onClick={onChoose}
      className="d-flex align-items-center justify-content-between gap-3 py-3"
      data-testid="organization-option"
      data-organization-id={organization.organizationID}
    >
      <div className="text-start">
        <div className="fw-semibold">{organization.name}</div>
        <div className={`small ${current ? '' : 'text-body-secondary'}`}>
          {t('changeOrganization.codes', {
            memberCode: organization.sakuraAccount.sakuraMemberCode,
            serviceCode: organization.serviceCode,
          })}
        </div>
      </div>
      <div className="d-flex align-items-center gap-2">
        {current && (
          <Badge bg="light" text="dark">
            {t('changeOrganization.current')}
          </Badge>
        )}
        <Badge bg={organization.isLive ? 'info' : 'secondary'}>
          {t(organization.isLive ? 'organization.kindLive' : 'organization.kindImage')}
        </Badge>
      </div>
    </ListGroup.Item>
  );
}

export function ChangeOrganizationPage() {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const handleError = useApiErrorHandler();
  const { organization: current } = useSession();
  const organizations = useOrganizations();
  const change = useChangeOrganization();

  useEffect(() => {
    if (organizations.error) handleError(organizations.error);
  }, [organizations.error, handleError]);

  const choose = async (organizationID: number) => {
    try {
      await change.mutateAsync(organizationID);
      await navigate(paths.home());
    } catch (error) {
      handleError(error, { action: 'organization' });
    }
  };

  const list = organizations.data?.organizations ?? [];
  return (
    <div className="centered-panel wide">
      <PageHeader title={t('title.changeOrganization')} />
      <Card className="shadow-sm border-0">
        <Card.Body>
          <p className="text-body-secondary small">{t('changeOrganization.lead')}</p>
          {organizations.isPending && (
            <div className="text-center py-4">
              <Spinner animation="border" variant="secondary" role="status">
                <span className="visually-hidden">{t('common.loading')}</span>
              </Spinner>
            </div>
          )}
          {organizations.isSuccess && list.length === 0 && (
            <Alert variant="secondary" className="mb-0" data-testid="organization-empty">
              {t('changeOrganization.empty')}
            </Alert>
          )}
          {list.length > 0 && (
            <ListGroup data-testid="organization-list">
              {list.map((organization) => (
                <OrganizationRow
                  key={organization.organizationID}
                  organization={organization}
                  current={organization.organizationID === current?.organizationID}
                  busy={change.isPending}
                  onChoose={() => void choose(organization.organizationID)}
                />
              ))}
            </ListGroup>
          )}
        </Card.Body>
      </Card>
    </div>
  );
}
