import Col, { type ColProps } from 'react-bootstrap/Col';
import Row from 'react-bootstrap/Row';

/** What a usage figure shows. */
export interface Figure {
  label: string;
  value: string;
  unit?: string;
  note?: string;
  testId: string;
}

/** How wide each figure of a row is, per breakpoint. */
type FigureColumns = Pick<ColProps, 'xs' | 'sm' | 'md' | 'lg'>;

/** One figure of a usage screen: a label, the value (with its unit) and an optional note. */
function UsageFigure({ label, value, unit, note, testId, ...col }: Figure & FigureColumns) {
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

/** A row of figures of the same width. */
export function UsageFigures({
  figures,
  columns,
  className = 'g-3',
}: {
  figures: Figure[];
  columns: FigureColumns;
  className?: string;
}) {
  return (
    <Row className={className}>
      {figures.map((figure) => (
        <UsageFigure key={figure.testId} {...columns} {...figure} />
      ))}
    </Row>
  );
}
