import { useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import Badge from 'react-bootstrap/Badge';
import Button from 'react-bootstrap/Button';
import Card from 'react-bootstrap/Card';
import Col from 'react-bootstrap/Col';
import Row from 'react-bootstrap/Row';
import Table from 'react-bootstrap/Table';
import { useTranslation } from 'react-i18next';
import { Link, useRevalidator } from 'react-router';
import {
  normalisePlan,
  PLAN_FEATURES,
  PLAN_NAMES,
  PLANS,
  type MessageKey,
  type OperationOutput,
  type Operations,
  type PlanFeatureSet,
  type PlanNumber,
} from '@ukiyo/contract';
import { ConfirmModal } from '@/components/confirm-modal.tsx';
import { LoadingBlock } from '@/components/loading-block.tsx';
import { PageHeader } from '@/components/page-header.tsx';
import { ApiError } from '@/lib/api-client.ts';
import { useApiErrorHandler, useReportQueryError } from '@/lib/api-errors.ts';
import { flash } from '@/lib/flash.ts';
import { formatUtcDate } from '@/lib/format.ts';
import { usePlanFeatures } from '@/lib/plan-features.ts';
import { formatCount, formatMoney, toGiB } from '@/lib/usage-format.ts';
import { usePlanPrices } from '@/features/usage/api/usage-api.ts';
import { helpSubjectPath } from '@/features/help/help-subject.ts';
import { useChangePlan } from '@/features/plan/api/plan-api.ts';
import { nextMonthStartUtc, planAction, type PlanAction } from './plan-change.ts';

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

const PRICE_ROWS = ['monthlyFee', 'includedRequests', 'includedBytes', 'per10kRequests', 'perGiB'] as const;
type PriceRow = (typeof PRICE_ROWS)[number];
type Price = OperationOutput<Operations['plan.prices']>['prices'][number];

/** One price of a plan, from plan_prices (no price lives in the console). */
function PriceValue({ price, row }: { price: Price; row: PriceRow }) {
  const { i18n } = useTranslation();
  const language = i18n.language;
  if (row === 'includedRequests') return <>{formatCount(price.includedRequests, language)}</>;
  if (row === 'includedBytes')
    return <>{formatCount(Math.round(toGiB(price.includedBytes)), language)} GiB</>;
  return <>{formatMoney(price[row], price.currency, language)}</>;
}

const FEATURES = ['originLimit', 'userLimit', 'supportEmail', 'customDomain', 's3Origins'] as const;
type Feature = (typeof FEATURES)[number];

/** One limit or feature of a plan, from the contract's plan table (no number lives here). */
function FeatureValue({ features, feature }: { features: PlanFeatureSet; feature: Feature }) {
  const { t } = useTranslation();
  if (feature === 'originLimit') return <>{t('plan.upTo', { count: features.originLimit })}</>;
  if (feature === 'userLimit')
    return (
      <>{features.userLimit === null ? t('plan.unlimited') : t('plan.upTo', { count: features.userLimit })}</>
    );
  return <Mark on={features[feature]} />;
}

/** One plan's limits and features, as rows of label and value. */
function FeatureList({ features, testId }: { features: PlanFeatureSet; testId: string }) {
  const { t } = useTranslation();
  return (
    <ul className="list-unstyled mb-0 plan-features" data-testid={testId}>
      {FEATURES.map((feature) => (
        <li
          key={feature}
          className="d-flex justify-content-between gap-3 py-1 border-bottom"
          data-feature={feature}
        >
          <span className="text-body-secondary">{t(`plan.${feature}`)}</span>
          <span className="text-end" data-testid={`${testId}-${feature}`}>
            <FeatureValue features={features} feature={feature} />
          </span>
        </li>
      ))}
    </ul>
  );
}

/** A refused change, said in place: the sales case is a note with a way to reach them. */
function Refusal({ code, messageKey, target }: { code: string; messageKey: MessageKey; target: PlanNumber }) {
  const { t } = useTranslation();
  if (code === 'plan change needs sales') {
    return (
      <Alert variant="info" data-testid="plan-refusal" data-code={code}>
        <div className="fw-semibold">{t(messageKey)}</div>
        <div className="small mt-1">
          {t('plan.contactSalesNote')}{' '}
          <Link to={helpSubjectPath({ kind: 'plan', plan: target })} data-testid="plan-refusal-contact">
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

/**
 * What a plan's column offers: upgrades and downgrades are changes the console makes; a change
 * to or from Enterprise is sales' (the server refuses it), so it opens the contact form about it.
 */
function PlanChoice({
  kind,
  plan,
  disabled,
  onChoose,
}: {
  kind: PlanAction;
  plan: PlanNumber;
  disabled: boolean;
  onChoose: () => void;
}) {
  const { t } = useTranslation();
  if (kind === 'current') {
    return <span className="small text-body-secondary text-nowrap">{t('plan.currentBadge')}</span>;
  }
  if (kind === 'sales') {
    return (
      <Link
        to={helpSubjectPath({ kind: 'plan', plan })}
        className="btn btn-outline-primary btn-sm text-nowrap"
        data-testid="plan-contact-sales"
        data-plan={plan}
      >
        {t('plan.contactSales')}
      </Link>
    );
  }
  return (
    <Button
      variant={kind === 'upgrade' ? 'primary' : 'outline-primary'}
      size="sm"
      className="text-nowrap"
      disabled={disabled}
      onClick={onChoose}
      data-testid="plan-select"
      data-plan={plan}
    >
      {t(kind === 'upgrade' ? 'plan.upgrade' : 'plan.downgrade')}
    </Button>
  );
}

export function PlanPage() {
  const { t, i18n } = useTranslation();
  const planName = usePlanName();
  const handleError = useApiErrorHandler();
  const revalidator = useRevalidator();
  const query = usePlanFeatures();
  const prices = usePlanPrices();
  const change = useChangePlan();
  const [choosing, setChoosing] = useState<PlanNumber | null>(null);
  const [refusal, setRefusal] = useState<{ error: ApiError; target: PlanNumber } | null>(null);
  useReportQueryError(query.error);
  useReportQueryError(prices.error);

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
          action: 'plan',
        });
      } else if (target === current && pending !== null) {
        flash.now({ variant: 'success', key: 'plan.pendingCancelled', action: 'plan' });
      } else {
        flash.now({
          variant: 'success',
          key: 'plan.changed',
          params: { plan: planName(result.plan) },
          action: 'plan',
        });
      }
      // The session's organization carries the plan: read it again.
      void revalidator.revalidate();
    } catch (error) {
      if (error instanceof ApiError && error.code.startsWith('plan ')) setRefusal({ error, target });
      else handleError(error, { action: 'plan' });
    } finally {
      setChoosing(null);
    }
  };

  const action = choosing === null ? null : planAction(current, choosing);
  return (
    <>
      <PageHeader title={t('title.plan')} lead={t('plan.lead')} />
      {refusal && (
        <Refusal code={refusal.error.code} messageKey={refusal.error.messageKey} target={refusal.target} />
      )}
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
          <Card className="shadow-sm border-0">
            <Table responsive className="mb-0 align-middle plan-compare" data-testid="plan-limits">
              <thead>
                <tr>
                  <th scope="col" className="text-body-secondary fw-normal small">
                    {t('plan.feature')}
                  </th>
                  {PLANS.map((plan) => (
                    <th
                      key={plan}
                      scope="col"
                      className={`text-center ${plan === current ? 'table-primary' : ''}`}
                      data-testid="plan-column"
                      data-plan={plan}
                    >
                      <div>{planName(plan)}</div>
                      {plan === current && <Badge bg="primary">{t('plan.currentBadge')}</Badge>}
                      {pending === plan && (
                        <Badge bg="info" text="dark">
                          {t('plan.pendingBadge')}
                        </Badge>
                      )}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {PRICE_ROWS.map((row) => (
                  <tr key={row} data-price={row}>
                    <th scope="row" className="fw-normal text-body-secondary">
                      {t(`cost.price.${row}`)}
                    </th>
                    {PLANS.map((plan) => {
                      const price = prices.data?.prices.find((entry) => entry.plan === plan);
                      return (
                        <td
                          key={plan}
                          className={`text-center text-nowrap ${plan === current ? 'table-primary' : ''}`}
                          data-testid={`plan-price-${plan}-${row}`}
                        >
                          {price ? <PriceValue price={price} row={row} /> : '–'}
                        </td>
                      );
                    })}
                  </tr>
                ))}
                {FEATURES.map((feature) => (
                  <tr key={feature} data-feature={feature}>
                    <th scope="row" className="fw-normal text-body-secondary">
                      {t(`plan.${feature}`)}
                    </th>
                    {PLANS.map((plan) => (
                      <td
                        key={plan}
                        className={`text-center text-nowrap ${plan === current ? 'table-primary' : ''}`}
                        data-testid={`plan-limit-${plan}-${feature}`}
                      >
                        <FeatureValue features={PLAN_FEATURES[plan]} feature={feature} />
                      </td>
                    ))}
                  </tr>
                ))}
                <tr>
                  <th scope="row" className="visually-hidden">
                    {t('plan.action')}
                  </th>
                  {PLANS.map((plan) => (
                    <td key={plan} className={`text-center ${plan === current ? 'table-primary' : ''}`}>
                      <PlanChoice
                        kind={planAction(current, plan)}
                        plan={plan}
                        disabled={change.isPending || pending === plan}
                        onChoose={() => setChoosing(plan)}
                      />
                    </td>
                  ))}
                </tr>
              </tbody>
            </Table>
          </Card>
          <p className="small text-body-secondary mt-3 mb-1">{t('plan.salesHint')}</p>
          <p className="small text-body-secondary">{t('plan.utcNote')}</p>
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
                : t('plan.confirmUpgrade')}
            </p>
          </>
        )}
      </ConfirmModal>
    </>
  );
}
