import type { ReactNode } from 'react';
import Card from 'react-bootstrap/Card';

/**
 * A signed-out page (login, password reset, activation): one card in the middle of the page,
 * its heading and an optional lead first. `wide` for pages that say more than a form.
 */
export function AuthPanel({
  title,
  lead,
  wide = false,
  children,
}: {
  title: string;
  lead?: string;
  wide?: boolean;
  children: ReactNode;
}) {
  return (
    <div className={wide ? 'centered-panel wide' : 'centered-panel'}>
      <Card className="shadow-sm border-0">
        <Card.Body className="p-4 p-sm-5">
          <h1 className={lead ? 'h4 mb-1' : 'h4 mb-4'}>{title}</h1>
          {lead && <p className="text-body-secondary small mb-4">{lead}</p>}
          {children}
        </Card.Body>
      </Card>
    </div>
  );
}
