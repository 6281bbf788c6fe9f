import type { OperationOutput, Operations } from '@ukiyo/contract';

export type AdminUsageRow = OperationOutput<Operations['admin.statistics']>['organizations'][number];
export type SortKey = 'memberCode' | 'serviceCode' | 'name' | 'requests' | 'outboundBytes';
export interface Sort {
  key: SortKey;
  descending: boolean;
}

export const ADMIN_STATISTICS_COLUMNS: { key: SortKey; labelKey: string; numeric: boolean }[] = [
  { key: 'memberCode', labelKey: 'usage.memberCode', numeric: false },
  { key: 'serviceCode', labelKey: 'usage.serviceCode', numeric: false },
  { key: 'name', labelKey: 'usage.organizationName', numeric: false },
  { key: 'requests', labelKey: 'usage.requests', numeric: true },
  { key: 'outboundBytes', labelKey: 'usage.outboundGiB', numeric: true },
];

export function sortRows(
  rows: readonly AdminUsageRow[],
  { key, descending }: Sort,
  language: string,
): AdminUsageRow[] {
  const collator = new Intl.Collator(language, { numeric: true });
  const direction = descending ? -1 : 1;
  return [...rows].sort((a, b) => {
    const left = a[key];
    const right = b[key];
    const order =
      typeof left === 'number' && typeof right === 'number'
        ? left - right
        : collator.compare(String(left), String(right));
    // Ties keep a stable, readable order.
    return order * direction || a.organizationID - b.organizationID;
  });
}

/** The invoice CSV's header row: the field names of the invoice rows (console-spec section 3). */
// The spec's four fields first, then what plan_prices adds, so a reader by position still works.
export const INVOICE_CSV_FIELDS = [
  'memberId',
  'serviceCd',
  'name',
  'transferGiB',
  'requests',
  'amount',
  'currency',
] as const;
