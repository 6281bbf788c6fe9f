import { useLayoutEffect, useRef } from 'react';
import Table, { type TableProps } from 'react-bootstrap/Table';

/** A header's words without its decorations (a sort arrow is aria-hidden). */
function visibleText(header: HTMLElement): string {
  const copy = header.cloneNode(true) as HTMLElement;
  for (const hidden of Array.from(copy.querySelectorAll('[aria-hidden="true"]'))) hidden.remove();
  return copy.textContent ?? '';
}

/**
 * Gives every body and footer cell its column's header text as `data-label`: on a phone the
 * header row is hidden and each row becomes a card of labelled cells (styles.css,
 * `.stacking-table`). The header of the row buttons' column carries `data-actions`: its cells
 * get that mark instead of a label, and stay in view while a wide table scrolls. Cells spanning
 * several columns get neither.
 */
export function labelCells(table: HTMLTableElement): void {
  const columns: { label: string; actions: boolean }[] = [];
  for (const header of Array.from(table.tHead?.rows[0]?.cells ?? [])) {
    const actions = header.hasAttribute('data-actions');
    const column = { label: actions ? '' : visibleText(header).trim(), actions };
    for (let span = 0; span < header.colSpan; span++) columns.push(column);
  }
  const sections = [...Array.from(table.tBodies), ...(table.tFoot ? [table.tFoot] : [])];
  for (const row of sections.flatMap((section) => Array.from(section.rows))) {
    let index = 0;
    for (const cell of Array.from(row.cells)) {
      const column = cell.colSpan === 1 ? columns[index] : undefined;
      if (column?.label) cell.dataset.label = column.label;
      else delete cell.dataset.label;
      cell.toggleAttribute('data-actions', column?.actions === true);
      index += cell.colSpan;
    }
  }
}

/**
 * The console's table: on a desktop it scrolls inside its own box when it is too wide; on a
 * phone its rows stack as cards, so the page never scrolls sideways and row buttons stay in view.
 */
export function StackingTable({
  fields = false,
  className,
  ...props
}: Omit<TableProps, 'responsive'> & {
  /** Rows of form fields: on a phone no cell stands out as the card's title. */
  fields?: boolean;
}) {
  const table = useRef<HTMLTableElement>(null);
  useLayoutEffect(() => {
    const element = table.current;
    if (!element) return;
    labelCells(element);
    // Rows and headers change without this component rendering (a row's own state, a language
    // switch); labelling only touches attributes, which the observer does not watch.
    const observer = new MutationObserver(() => labelCells(element));
    observer.observe(element, { childList: true, subtree: true, characterData: true });
    return () => observer.disconnect();
  }, []);
  const classes = ['stacking-table', fields && 'stacking-table-fields', className].filter(Boolean).join(' ');
  return <Table ref={table} responsive className={classes} {...props} />;
}
