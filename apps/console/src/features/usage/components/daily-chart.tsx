import { useEffect, useRef, useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import { useTranslation } from 'react-i18next';
import { LoadingBlock } from '@/components/loading-block.tsx';
import { formatCount, toGiB } from '@/lib/usage-format.ts';
// A type only: the module itself loads with import() below.
import type * as EChartsModule from './echarts.ts';

export interface ChartSeries {
  name: string;
  /** One value per entry of `days`. */
  values: number[];
}

type Instance = ReturnType<(typeof EChartsModule)['echarts']['init']>;

/**
 * Daily usage as stacked bars, one series per origin or channel. ECharts loads on first render;
 * `metric` chooses requests or outbound bytes (shown in GiB).
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
  const { t, i18n } = useTranslation();
  const container = useRef<HTMLDivElement>(null);
  const chart = useRef<Instance | null>(null);
  const [state, setState] = useState<'loading' | 'ready' | 'failed'>('loading');

  useEffect(() => {
    let disposed = false;
    let observer: ResizeObserver | undefined;
    import('./echarts.ts')
      .then(({ echarts }) => {
        if (disposed || !container.current) return;
        chart.current = echarts.init(container.current, null, { renderer: 'canvas' });
        observer = new ResizeObserver(() => chart.current?.resize());
        observer.observe(container.current);
        setState('ready');
      })
      .catch(() => {
        if (!disposed) setState('failed');
      });
    return () => {
      disposed = true;
      observer?.disconnect();
      chart.current?.dispose();
      chart.current = null;
    };
  }, []);

  useEffect(() => {
    if (state !== 'ready' || !chart.current) return;
    const language = i18n.language;
    const value = (v: number) => (metric === 'outbound' ? toGiB(v) : v);
    chart.current.setOption(
      {
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
      },
      { notMerge: true },
    );
  }, [state, days, series, metric, requestsAxis, i18n.language]);

  return (
    <div className="position-relative" data-testid="stats-chart" data-state={state}>
      {state === 'loading' && <LoadingBlock />}
      {state === 'failed' && (
        <Alert variant="warning" className="mb-0">
          {t('usage.chartFailed')}
        </Alert>
      )}
      <div
        ref={container}
        className="usage-chart"
        style={{ height: 320, width: '100%' }}
        role="img"
        aria-label={label}
      />
    </div>
  );
}
