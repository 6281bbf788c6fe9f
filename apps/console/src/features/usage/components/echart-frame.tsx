import { useEffect, useRef, useState } from 'react';
import Alert from 'react-bootstrap/Alert';
import { useTranslation } from 'react-i18next';
import { LoadingBlock } from '@/components/loading-block.tsx';
// A type only: the module itself loads with import() below.
import type * as EChartsModule from './echarts.ts';

type Instance = ReturnType<(typeof EChartsModule)['echarts']['init']>;
export type ChartOption = Parameters<Instance['setOption']>[0];

/**
 * One ECharts chart: ECharts loads on first render (a chunk of its own), follows its
 * container's size, and draws `option` again whenever it changes.
 */
export function EChartFrame({
  option,
  label,
  height = 320,
  testId,
}: {
  option: ChartOption;
  /** What the chart shows, for assistive technology. */
  label: string;
  height?: number;
  testId: string;
}) {
  const { t } = useTranslation();
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
    if (state === 'ready') chart.current?.setOption(option, { notMerge: true });
  }, [state, option]);

  return (
    <div className="position-relative" data-testid={testId} data-state={state}>
      {state === 'loading' && <LoadingBlock />}
      {state === 'failed' && (
        <Alert variant="warning" className="mb-0">
          {t('usage.chartFailed')}
        </Alert>
      )}
      <div
        ref={container}
        className="usage-chart"
        style={{ height, width: '100%' }}
        role="img"
        aria-label={label}
      />
    </div>
  );
}
