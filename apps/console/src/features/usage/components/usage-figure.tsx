import Col, { type ColProps } from 'react-bootstrap/Col';

/** One figure of a usage screen: a label, the value (with its unit) and an optional note. */
export function UsageFigure({
  label,
  value,
  unit,
  note,
  testId,
  ...col
}: {
  label: string;
  value: string;
  unit?: string;
  note?: string;
  testId: string;
} & Pick<ColProps, 'xs' | 'sm' | 'md' | 'lg'>) {
  return (
    <Col {...col}>
      <div className="usage-figure h-100 border rounded-3 p-3 bg-body">
        <div className="small text-body-secondary">{label}</div>
        <div className="fs-4 fw-semibold text-nowrap" data-testid={testId}>
          {value}
          {unit && <span className="fs-6 fw-normal text-body-secondary ms-1">{unit}</span>}
        </div>
        {note && <div className="small text-body-secondary">{note}</div>}
      </div>
    </Col>
  );
}
