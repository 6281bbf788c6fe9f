import { useCallback, useMemo } from 'react';
import Button from 'react-bootstrap/Button';
import Form from 'react-bootstrap/Form';
import { useTranslation } from 'react-i18next';
import { useSearchParams } from 'react-router';
import {
  MIN_YEAR,
  compareMonths,
  currentMonth,
  parseYearMonth,
  shiftMonth,
  type YearMonth,
} from '@/lib/usage-format.ts';

/**
 * The month a usage page shows, kept in the URL (?year=&month=) so it survives a reload and can
 * be shared; out-of-range values are clamped. Months after the current UTC month have no usage
 * and are not offered.
 */
export function useSelectedMonth(): [YearMonth, (next: YearMonth) => void] {
  const [params, setParams] = useSearchParams();
  const yearParam = params.get('year');
  const monthParam = params.get('month');
  const selected = useMemo(() => {
    const latest = currentMonth();
    const parsed = parseYearMonth(yearParam, monthParam, latest);
    return compareMonths(parsed, latest) > 0 ? latest : parsed;
  }, [yearParam, monthParam]);
  const select = useCallback(
    (next: YearMonth) =>
      setParams(
        (before) => {
          const after = new URLSearchParams(before);
          after.set('year', String(next.year));
          after.set('month', String(next.month));
          return after;
        },
        { replace: true, preventScrollReset: true },
      ),
    [setParams],
  );
  return [selected, select];
}

/** Year and month selects with previous and next buttons; every month is a UTC calendar month. */
export function MonthPicker({
  value,
  onChange,
  testId,
}: {
  value: YearMonth;
  onChange: (next: YearMonth) => void;
  testId: string;
}) {
  const { t, i18n } = useTranslation();
  const latest = currentMonth();
  const monthNames = new Intl.DateTimeFormat(i18n.language === 'en' ? 'en-GB' : 'ja-JP', {
    month: 'long',
    timeZone: 'UTC',
  });
  const years = [];
  for (let year = latest.year; year >= Math.max(MIN_YEAR, latest.year - 5); year -= 1) years.push(year);
  if (!years.includes(value.year)) years.push(value.year);
  const lastMonth = value.year === latest.year ? latest.month : 12;
  const change = (next: YearMonth) => onChange(compareMonths(next, latest) > 0 ? latest : next);
  return (
    <div className="d-flex flex-wrap align-items-center gap-2" data-testid={testId}>
      <Button
        variant="outline-secondary"
        size="sm"
        onClick={() => change(shiftMonth(value, -1))}
        aria-label={t('usage.previousMonth')}
        data-testid={`${testId}-prev`}
      >
        ‹
      </Button>
      <Form.Select
        size="sm"
        className="w-auto"
        value={value.year}
        onChange={(event) => change({ year: Number(event.target.value), month: value.month })}
        aria-label={t('usage.year')}
        data-testid={`${testId}-year`}
      >
        {years.map((year) => (
          <option key={year} value={year}>
            {t('usage.yearOption', { year })}
          </option>
        ))}
      </Form.Select>
      <Form.Select
        size="sm"
        className="w-auto"
        value={value.month}
        onChange={(event) => change({ year: value.year, month: Number(event.target.value) })}
        aria-label={t('usage.month')}
        data-testid={`${testId}-month`}
      >
        {Array.from({ length: lastMonth }, (_, index) => index + 1).map((month) => (
          <option key={month} value={month}>
            {t('usage.monthOption', {
              month,
              name: monthNames.format(new Date(Date.UTC(2000, month - 1, 1))),
            })}
          </option>
        ))}
      </Form.Select>
      <Button
        variant="outline-secondary"
        size="sm"
        disabled={compareMonths(value, latest) >= 0}
        onClick={() => change(shiftMonth(value, 1))}
        aria-label={t('usage.nextMonth')}
        data-testid={`${testId}-next`}
      >
        ›
      </Button>
      <span className="small text-body-secondary">{t('usage.utcShort')}</span>
    </div>
  );
}
