import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { formatCount, toGiB } from '@/lib/usage-format.ts';
import { EChartFrame, type ChartOption } from './echart-frame.tsx';

export interface ChartSeries {
  name: string;
  /** One value per entry of `days`. */
  values: number[];
}

/**
 * Daily usage as stacked bars, one series per origin or channel; `metric` chooses requests or
 * outbound bytes (shown in GiB).
 */
export function DailyChart({
  days,
  series,
  metric,
  requestsAxis,
  label,
}: {
  days: string[];
  series: ChartSeries[];
  metric: 'requests' | 'outbound';
  /** The value axis's name when it counts requests. */
  requestsAxis: string;
  /** What the chart shows, for assistive technology. */
  label: string;
}) {
  const { i18n } = useTranslation();
  const language = i18n.language;
  const option = useMemo<ChartOption>(() => {
    const value = (v: number) => (metric === 'outbound' ? toGiB(v) : v);
    return {
      animation: false,
      grid: { left: 8, right: 16, top: 40, bottom: 8, containLabel: true },
      legend: { type: 'scroll', top: 0 },
      tooltip: {
        trigger: 'axis',
        axisPointer: { type: 'shadow' },
        valueFormatter: (v: unknown) =>
          metric === 'outbound' ? `${Number(v).toFixed(2)} GiB` : formatCount(Number(v), language),
      },
      xAxis: { type: 'category', data: days.map((day) => day.slice(8)) },
      yAxis: {
        type: 'value',
        name: metric === 'outbound' ? 'GiB' : requestsAxis,
        // From the axis to the right, so a long name is never cut at the edge.
        nameTextStyle: { align: 'left' },
        minInterval: metric === 'requests' ? 1 : 0,
      },
      series: series.map((item) => ({
        name: item.name,
        type: 'bar',
        stack: 'usage',
        emphasis: { focus: 'series' },
        data: item.values.map(value),
      })),
    };
  }, [days, series, metric, requestsAxis, language]);
  return <EChartFrame option={option} label={label} testId="stats-chart" />;
}
