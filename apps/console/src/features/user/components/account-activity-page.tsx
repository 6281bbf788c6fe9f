import { useState, type FormEvent } from 'react';
import Alert from 'react-bootstrap/Alert';
import Button from 'react-bootstrap/Button';
import ButtonGroup from 'react-bootstrap/ButtonGroup';
import Card from 'react-bootstrap/Card';
import Col from 'react-bootstrap/Col';
import Form from 'react-bootstrap/Form';
import Row from 'react-bootstrap/Row';
import Spinner from 'react-bootstrap/Spinner';
import { useTranslation } from 'react-i18next';
import {
  AUDIT_CHANGE_KINDS,
  AUDIT_SESSION_KINDS,
  hasPermission,
  Permission,
  type AuditKind,
} from '@ukiyo/contract';
import { paths } from '@/app/paths.ts';
import { LoadingBlock } from '@/components/loading-block.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import { LinkButton } from '@/components/link-button.tsx';
import { useApiErrorHandler, useReportQueryError } from '@/lib/api-errors.ts';
import { formatDateTime } from '@/lib/format.ts';
import { useSession } from '@/lib/session.ts';
import { buildCsv, downloadCsv } from '@/lib/usage-format.ts';
import {
  fetchAuditPage,
  useAuditTrail,
  type AuditFilter,
  type AuditScope,
} from '@/features/user/api/user-api.ts';
import { AuditTable, changedFieldsOf, fieldValue, type AuditEntry } from './activity-table.tsx';
import { ChoiceButton } from '@/components/choice-button.tsx';

/** A CSV export reads at most this many pages of the largest size (5,000 entries). */
const EXPORT_PAGES = 10;
const EXPORT_PAGE_SIZE = 500;

interface FilterForm {
  kind: '' | AuditKind;
  actor: string;
  /** Local dates (YYYY-MM-DD), both days included. */
  from: string;
  to: string;
}

const ALL_KINDS = [...AUDIT_SESSION_KINDS, ...AUDIT_CHANGE_KINDS];
const NO_FILTER: FilterForm = { kind: '', actor: '', from: '', to: '' };

/** The form's local dates as the operation's instants: `to` takes in its whole day. */
function filterOf(form: FilterForm): AuditFilter {
  const day = (value: string, offsetDays = 0) => {
    const date = new Date(`${value}T00:00:00`);
    date.setDate(date.getDate() + offsetDays);
    return date.toISOString();
  };
  return {
    ...(form.kind ? { kind: form.kind } : {}),
    ...(form.actor.trim() ? { actor: form.actor.trim() } : {}),
    ...(form.from ? { from: day(form.from) } : {}),
    ...(form.to ? { to: day(form.to, 1) } : {}),
  };
}

/**
 * /user/activity: one's own sign-ins, sign-outs and changes, and for member managers the
 * current organization's whole configuration trail; filtered by kind, person or token, and
 * period, a page at a time, with a CSV export of everything the filters match.
 */
export function AccountActivityPage() {
  const { t, i18n } = useTranslation();
  const { user, organization } = useSession();
  const handleError = useApiErrorHandler();
  const managesMembers = organization !== null && hasPermission(user?.permission ?? 0, Permission.member);
  const [scope, setScope] = useState<AuditScope>('self');
  const [form, setForm] = useState<FilterForm>(NO_FILTER);
  const [filter, setFilter] = useState<AuditFilter>({});
  const [exporting, setExporting] = useState(false);
  const trail = useAuditTrail(scope, filter);
  useReportQueryError(trail.error);
  const entries = trail.data?.pages.flatMap((page) => page.entries) ?? [];

  const apply = (event: FormEvent) => {
    event.preventDefault();
    setFilter(filterOf(form));
  };
  const reset = () => {
    setForm(NO_FILTER);
    setFilter({});
  };

  const exportCsv = async () => {
    setExporting(true);
    try {
      const rows: AuditEntry[] = [];
      let cursor: number | undefined;
      for (let page = 0; page < EXPORT_PAGES; page++) {
        const answer = await fetchAuditPage(scope, filter, cursor, EXPORT_PAGE_SIZE);
        rows.push(...answer.entries);
        if (answer.nextCursor === null) break;
        cursor = answer.nextCursor;
      }
      const header = [
        t('activity.time'),
        t('activity.kind'),
        t('activity.operationColumn'),
        t('activity.actor'),
        t('activity.token'),
        t('activity.subject'),
        t('activity.ip'),
        t('activity.changes'),
      ];
      const csv = buildCsv(
        header,
        rows.map((entry) => [
          formatDateTime(entry.time, i18n.language),
          t(`activity.kind.${entry.kind}`),
          entry.operation ?? '',
          entry.email,
          entry.token?.name ?? '',
          entry.subject,
          entry.ip,
          changedFieldsOf(entry)
            .map(({ field, before, after }) => `${field}: ${fieldValue(before)} → ${fieldValue(after)}`)
            .join('\n'),
        ]),
      );
      const name = scope === 'organization' ? (organization?.serviceCode ?? 'organization') : 'account';
      downloadCsv(`audit-${name}-${new Date().toISOString().slice(0, 10)}.csv`, csv);
    } catch (error) {
      handleError(error);
    } finally {
      setExporting(false);
    }
  };

  /** A labelled input of the filter form, named by its field (its label is `activity.{field}`). */
  const textField = (field: 'actor' | 'from' | 'to', type: 'text' | 'date', placeholder?: string) => (
    <Form.Group controlId={`activity-${field}`}>
      <Form.Label className="small mb-1">{t(`activity.${field}`)}</Form.Label>
      <Form.Control
        size="sm"
        type={type}
        value={form[field]}
        maxLength={254}
        placeholder={placeholder}
        onChange={(event) => setForm({ ...form, [field]: event.target.value })}
        data-testid={`activity-${field}`}
      />
    </Form.Group>
  );
  const scopeButton = (value: AuditScope, label: string) => (
    <ChoiceButton
      chosen={scope === value}
      onChoose={() => setScope(value)}
      testId={`activity-scope-${value}`}
    >
      {label}
    </ChoiceButton>
  );
  return (
    <>
      <PageHeader
        title={t('title.userActivity')}
        lead={t(scope === 'organization' ? 'activity.organizationLead' : 'activity.ownLead')}
        actions={
          <LinkButton to={paths.userUpdate()} variant="outline-secondary" testId="activity-back">
            {t('activity.back')}
          </LinkButton>
        }
      />
      <Card className="shadow-sm border-0">
        <Card.Header className="bg-body">
          <div className="d-flex flex-wrap justify-content-between align-items-center gap-2 mb-3">
            {managesMembers ? (
              <ButtonGroup size="sm" aria-label={t('activity.scope')}>
                {scopeButton('self', t('activity.scopeSelf'))}
                {scopeButton('organization', t('activity.scopeOrganization', { name: organization.name }))}
              </ButtonGroup>
            ) : (
              <span />
            )}
            <Button
              variant="outline-secondary"
              size="sm"
              disabled={exporting || entries.length === 0}
              onClick={() => void exportCsv()}
              data-testid="activity-csv"
            >
              {exporting && <Spinner size="sm" className="me-2" aria-hidden="true" />}
              {t('activity.downloadCsv')}
            </Button>
          </div>
          <Form onSubmit={apply} data-testid="activity-filters">
            <Row className="g-2 align-items-end">
              <Col xs={12} sm={6} lg={3}>
                <Form.Group controlId="activity-kind">
                  <Form.Label className="small mb-1">{t('activity.kind')}</Form.Label>
                  <Form.Select
                    size="sm"
                    value={form.kind}
                    onChange={(event) => setForm({ ...form, kind: event.target.value as FilterForm['kind'] })}
                    data-testid="activity-kind"
                  >
                    <option value="">{t('activity.allKinds')}</option>
                    {ALL_KINDS.map((kind) => (
                      <option key={kind} value={kind}>
                        {t(`activity.kind.${kind}`)}
                      </option>
                    ))}
                  </Form.Select>
                </Form.Group>
              </Col>
              <Col xs={12} sm={6} lg={3}>
                {textField('actor', 'text', t('activity.actorPlaceholder'))}
              </Col>
              <Col xs={6} lg={2}>
                {textField('from', 'date')}
              </Col>
              <Col xs={6} lg={2}>
                {textField('to', 'date')}
              </Col>
              <Col xs={12} lg={2} className="d-flex gap-2">
                <Button type="submit" size="sm" data-testid="activity-apply">
                  {t('activity.apply')}
                </Button>
                <Button variant="outline-secondary" size="sm" onClick={reset} data-testid="activity-reset">
                  {t('activity.reset')}
                </Button>
              </Col>
            </Row>
          </Form>
        </Card.Header>
        <Card.Body className="p-0 p-md-2">
          {trail.isPending ? (
            <LoadingBlock />
          ) : entries.length === 0 ? (
            <Alert variant="secondary" className="m-3" data-testid="activity-empty">
              {t('activity.empty')}
            </Alert>
          ) : (
            <AuditTable entries={entries} />
          )}
        </Card.Body>
        {trail.hasNextPage && (
          <Card.Footer className="bg-body text-center">
            <Button
              variant="outline-secondary"
              size="sm"
              disabled={trail.isFetchingNextPage}
              onClick={() => void trail.fetchNextPage()}
              data-testid="activity-more-pages"
            >
              {trail.isFetchingNextPage && <Spinner size="sm" className="me-2" aria-hidden="true" />}
              {t('activity.loadMore')}
            </Button>
          </Card.Footer>
        )}
      </Card>
    </>
  );
}
