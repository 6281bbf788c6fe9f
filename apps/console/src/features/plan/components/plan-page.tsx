import { useState, type ReactNode } from 'react';
import Alert from 'react-bootstrap/Alert';
import Badge from 'react-bootstrap/Badge';
import Button from 'react-bootstrap/Button';
import Card from 'react-bootstrap/Card';
import Col from 'react-bootstrap/Col';
import Row from 'react-bootstrap/Row';
import { useTranslation } from 'react-i18next';
import { Link, useRevalidator } from 'react-router';
import {
  normalisePlan,
  PLAN_FEATURES,
  PLAN_NAMES,
  type MessageKey,
  type PlanFeatureSet,
  type PlanNumber,
} from '@ukiyo/contract';
import { paths } from '../../../app/routes.ts';
import { ConfirmModal } from '../../../components/confirm-modal.tsx';
import { LoadingBlock } from '../../../components/loading-block.tsx';
import { PageHeader } from '../../../components/page-header.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { useApiErrorHandler, useReportQueryError } from '../../../lib/api-errors.ts';
import { flash } from '../../../lib/flash.ts';
import { formatUtcDate } from '../../../lib/format.ts';
import { usePlanFeatures } from '../../../lib/plan-features.ts';
import { useChangePlan } from '../api/plan-api.ts';
import { nextMonthStartUtc, planAction } from './plan-change.ts';

const PLANS: readonly PlanNumber[] = [1, 2, 3, 4];

function usePlanName() {
  const { t } = useTranslation();
  return (plan: number) => t(`plan.name.${PLAN_NAMES[normalisePlan(plan)]}`);
}

function Mark({ on }: { on: boolean }) {
  const { t } = useTranslation();
  return on ? (
    <span className="text-success fw-semibold" aria-label={t('plan.available')}>
      ✓
    </span>
  ) : (
    <span className="text-body-tertiary" aria-label={t('plan.notAvailable')}>
      —
    </span>
  );
}

/** One plan's limits and features, as rows of label and value. */
function FeatureList({ features, testId }: { features: PlanFeatureSet; testId: string }) {
  const { t } = useTranslation();
  const rows: [string, string, ReactNode][] = [
    ['originLimit', t('plan.originLimit'), t('plan.upTo', { count: features.originLimit })],
    [
      'userLimit',
      t('plan.userLimit'),
      features.userLimit === null ? t('plan.unlimited') : t('plan.upTo', { count: features.userLimit }),
    ],
    ['supportEmail', t('plan.supportEmail'), <Mark on={features.supportEmail} />],
    ['customDomain', t('plan.customDomain'), <Mark on={features.customDomain} />],
    ['s3Origins', t('plan.s3Origins'), <Mark on={features.s3Origins} />],
  ];
  return (
    <ul className="list-unstyled mb-0 plan-features" data-testid={testId}>
      {rows.map(([key, label, value]) => (
        <li key={key} className="d-flex justify-content-between gap-3 py-1 border-bottom" data-feature={key}>
          <span className="text-body-secondary">{label}</span>
          <span className="text-end" data-testid={`${testId}-${key}`}>
            {value}
          </span>
        </li>
      ))}
    </ul>
  );
}

/** A refused change, said in place: the sales case is a note with a way to reach them. */
function Refusal({ code, messageKey }: { code: string; messageKey: MessageKey }) {
  const { t } = useTranslation();
  if (code === 'plan change needs sales') {
    return (
      <Alert variant="info" data-testid="plan-refusal" data-code={code}>
        <div className="fw-semibold">{t(messageKey)}</div>
        <div className="small mt-1">
          {t('plan.contactSalesNote')}{' '}
          <Link to={paths.help()} data-testid="plan-contact-sales">
            {t('plan.contactSalesLink')}
          </Link>
        </div>
      </Alert>
    );
  }
  return (
    <Alert variant="danger" data-testid="plan-refusal" data-code={code}>
      {t(messageKey)}
    </Alert>
  );
}

export function PlanPage() {
  const { t, i18n } = useTranslation();
  const planName = usePlanName();
  const handleError = useApiErrorHandler();
  const revalidator = useRevalidator();
  const query = usePlanFeatures();
  const change = useChangePlan();
  const [choosing, setChoosing] = useState<PlanNumber | null>(null);
  const [refusal, setRefusal] = useState<ApiError | null>(null);
  useReportQueryError(query.error);

  const data = query.data;
  const current = normalisePlan(data?.plan);
  const pending = data?.pendingPlan ?? null;
  const effectiveDate = formatUtcDate(nextMonthStartUtc(new Date()), i18n.language);

  const submit = async (target: PlanNumber) => {
    setRefusal(null);
    try {
      const result = await change.mutateAsync(target);
      if (result.pendingPlan !== null) {
        flash.now({
          variant: 'success',
          key: 'plan.scheduled',
          params: {
            plan: planName(result.pendingPlan),
            date: formatUtcDate(result.effectiveAt, i18n.language),
          },
        });
      } else if (target === current && pending !== null) {
        flash.now({ variant: 'success', key: 'plan.pendingCancelled' });
      } else {
        flash.now({ variant: 'success', key: 'plan.changed', params: { plan: planName(result.plan) } });
      }
      // The session's organization carries the plan: read it again.
      void revalidator.revalidate();
    } catch (error) {
      if (error instanceof ApiError && error.code.startsWith('plan ')) setRefusal(error);
      else handleError(error);
    } finally {
      setChoosing(null);
    }
  };

  const action = choosing === null ? null : planAction(current, choosing);
  return (
    <>
      <PageHeader title={t('title.plan')} lead={t('plan.lead')} />
      {refusal && <Refusal code={refusal.code} messageKey={refusal.messageKey} />}
      {query.isPending && <LoadingBlock />}
      {data && (
        <>
          <Card className="shadow-sm border-0 mb-4" data-testid="plan-current" data-plan={current}>
            <Card.Body className="p-4">
              <Row className="g-4 align-items-center">
                <Col md={5}>
                  <div className="small text-body-secondary">{t('plan.currentPlan')}</div>
                  <div className="h4 mb-0" data-testid="plan-current-name">
                    {planName(current)}
                  </div>
                </Col>
                <Col md={7}>
                  <FeatureList features={data.features} testId="plan-current-features" />
                </Col>
              </Row>
              {pending !== null && (
                <Alert
                  variant="info"
                  className="mt-4 mb-0 d-flex flex-wrap align-items-center justify-content-between gap-2"
                  data-testid="plan-pending"
                  data-plan={pending}
                >
                  <span>{t('plan.pending', { plan: planName(pending), date: effectiveDate })}</span>
                  <Button
                    variant="outline-secondary"
                    size="sm"
                    disabled={change.isPending}
                    onClick={() => void submit(current)}
                    data-testid="plan-cancel-pending"
                  >
                    {t('plan.cancelPending')}
                  </Button>
                </Alert>
              )}
            </Card.Body>
          </Card>
          <h2 className="h5 mb-3">{t('plan.compare')}</h2>
          <Row xs={1} md={2} xl={4} className="g-3">
            {PLANS.map((plan) => {
              const kind = planAction(current, plan);
              return (
                <Col key={plan}>
                  <Card
                    className={`h-100 shadow-sm ${kind === 'current' ? 'border-primary border-2' : 'border-0'}`}
                    data-testid="plan-card"
                    data-plan={plan}
                  >
                    <Card.Body className="d-flex flex-column">
                      <div className="d-flex justify-content-between align-items-start mb-3">
                        <h3 className="h5 mb-0">{planName(plan)}</h3>
                        {kind === 'current' && <Badge bg="primary">{t('plan.currentBadge')}</Badge>}
                        {pending === plan && (
                          <Badge bg="info" text="dark">
                            {t('plan.pendingBadge')}
                          </Badge>
                        )}
                      </div>
                      <FeatureList features={PLAN_FEATURES[plan]} testId={`plan-features-${plan}`} />
                      <div className="mt-auto pt-3">
                        {kind === 'current' ? (
                          <Button
                            variant="outline-primary"
                            className="w-100"
                            disabled
                            data-testid="plan-select"
                            data-plan={plan}
                          >
                            {t('plan.currentBadge')}
                          </Button>
                        ) : (
                          <Button
                            variant={kind === 'upgrade' ? 'primary' : 'outline-primary'}
                            className="w-100"
                            disabled={change.isPending || pending === plan}
                            onClick={() => setChoosing(plan)}
                            data-testid="plan-select"
                            data-plan={plan}
                          >
                            {t(
                              kind === 'upgrade'
                                ? 'plan.upgrade'
                                : kind === 'downgrade'
                                  ? 'plan.downgrade'
                                  : 'plan.change',
                            )}
                          </Button>
                        )}
                        {kind === 'sales' && (
                          <div className="small text-body-secondary mt-2">{t('plan.salesHint')}</div>
                        )}
                      </div>
                    </Card.Body>
                  </Card>
                </Col>
              );
            })}
          </Row>
          <p className="small text-body-secondary mt-3">{t('plan.utcNote')}</p>
        </>
      )}
      <ConfirmModal
        show={choosing !== null}
        title={t('plan.confirmTitle')}
        confirmLabel={t('plan.confirm')}
        variant="primary"
        busy={change.isPending}
        testId="plan-change"
        onConfirm={() => choosing !== null && void submit(choosing)}
        onCancel={() => setChoosing(null)}
      >
        {choosing !== null && (
          <>
            <p>{t('plan.confirmBody', { from: planName(current), to: planName(choosing) })}</p>
            <p className="mb-0 small text-body-secondary">
              {action === 'downgrade'
                ? t('plan.confirmDowngrade', { date: effectiveDate })
                : action === 'upgrade'
                  ? t('plan.confirmUpgrade')
                  : t('plan.salesHint')}
            </p>
          </>
        )}
      </ConfirmModal>
    </>
  );
}
