import { describe, expect, it } from 'vitest';
import { labelCells } from './stacking-table.tsx';

function table(html: string): HTMLTableElement {
  const element = document.createElement('table');
  element.innerHTML = html;
  return element;
}

const labelsOf = (element: HTMLTableElement) =>
  Array.from(element.querySelectorAll('tbody tr, tfoot tr')).map((row) =>
    Array.from((row as HTMLTableRowElement).cells).map((cell) => cell.dataset.label ?? null),
  );

describe('labelCells', () => {
  it('labels body and footer cells with their column header, spans counted', () => {
    const element = table(`
      <thead><tr><th colspan="2">Name</th><th>Requests <span aria-hidden="true">⇅</span></th><th data-actions><span>Actions</span></th></tr></thead>
      <tbody>
        <tr><td>a</td><td>b</td><td>1</td><td>edit</td></tr>
        <tr><td colspan="3">mail body</td><td>edit</td></tr>
      </tbody>
      <tfoot><tr><th>Total</th><td></td><td>1</td><td></td></tr></tfoot>`);
    labelCells(element);
    expect(labelsOf(element)).toEqual([
      ['Name', 'Name', 'Requests', null],
      [null, null],
      ['Name', 'Name', 'Requests', null],
    ]);
  });

  it('marks the cells of the buttons column', () => {
    const element = table(`
      <thead><tr><th>Name</th><th data-actions>Actions</th></tr></thead>
      <tbody><tr><td>a</td><td>edit</td></tr></tbody>`);
    labelCells(element);
    const cells = Array.from(element.querySelectorAll('td'));
    expect(cells.map((cell) => cell.hasAttribute('data-actions'))).toEqual([false, true]);
  });

  it('takes a label away when the column no longer has one', () => {
    const element = table(`<thead><tr><th>Kind</th></tr></thead><tbody><tr><td>x</td></tr></tbody>`);
    labelCells(element);
    element.querySelector('th')!.textContent = '';
    labelCells(element);
    expect(labelsOf(element)).toEqual([[null]]);
  });
});
