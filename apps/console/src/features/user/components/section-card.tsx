import type { ReactNode } from 'react';
import Card from 'react-bootstrap/Card';

/** One titled section of the account settings; `id` is its #hash target. */
export function SectionCard({
  id,
  title,
  lead,
  actions,
  children,
}: {
  id: string;
  title: string;
  lead?: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
}) {
  return (
    <Card className="shadow-sm border-0 h-100" id={id} data-testid={`section-${id}`}>
      <Card.Header className="bg-body border-bottom d-flex flex-wrap align-items-center justify-content-between gap-2 py-3">
        <div>
          <h2 className="h6 mb-0">{title}</h2>
          {lead && <div className="small text-body-secondary mt-1">{lead}</div>}
        </div>
        {actions}
      </Card.Header>
      <Card.Body className="p-4">{children}</Card.Body>
    </Card>
  );
}
