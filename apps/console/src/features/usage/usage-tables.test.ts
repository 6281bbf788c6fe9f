import { describe, expect, it } from 'vitest';
import { sortRows, type AdminUsageRow } from './usage-tables.ts';

const row = (
  organizationID: number,
  name: string,
  requests: number,
  outboundBytes: number,
): AdminUsageRow => ({
  organizationID,
  name,
  memberCode: `M${organizationID}`,
  serviceCode: `svc-${organizationID}`,
  requests,
  outboundBytes,
});

describe('sortRows', () => {
  const rows = [row(1, 'b', 5, 100), row(2, 'a10', 5, 300), row(3, 'a9', 1, 200)];

  it('sorts numbers both ways, ties by organization', () => {
    expect(
      sortRows(rows, { key: 'outboundBytes', descending: true }, 'en').map((r) => r.organizationID),
    ).toEqual([2, 3, 1]);
    expect(sortRows(rows, { key: 'requests', descending: false }, 'en').map((r) => r.organizationID)).toEqual(
      [3, 1, 2],
    );
  });

  it('sorts text naturally and leaves the input alone', () => {
    expect(sortRows(rows, { key: 'name', descending: false }, 'ja').map((r) => r.name)).toEqual([
      'a9',
      'a10',
      'b',
    ]);
    expect(rows.map((r) => r.organizationID)).toEqual([1, 2, 3]);
  });
});
