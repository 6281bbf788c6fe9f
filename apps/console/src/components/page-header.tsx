import type { ReactNode } from 'react';

/** The heading every page starts with; `actions` (a page's main buttons) sit on its right. */
export function PageHeader({
  title,
  lead,
  actions,
}: {
  title: string;
  lead?: ReactNode;
  actions?: ReactNode;
}) {
  return (
    <header className="page-header mb-4 d-flex flex-wrap align-items-end justify-content-between gap-3">
      <div>
        <h1 className="h3 mb-0">{title}</h1>
        {lead && <p className="text-body-secondary small mb-0 mt-1">{lead}</p>}
      </div>
      {actions && <div className="d-flex flex-wrap gap-2">{actions}</div>}
    </header>
  );
}
