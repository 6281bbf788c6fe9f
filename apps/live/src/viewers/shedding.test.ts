import { describe, expect, it } from 'vitest';
import { toShed } from './shedding.ts';

/** `[organization, channel, admitted at]`, named `{channel}{admitted at}`. */
type Member = [number, string, number];
const shed = (members: Member[], count: number) =>
  toShed(
    members,
    count,
    ([organizationId, channelId]) => ({ organizationId, channelId }),
    ([, , at]) => at,
  ).map(([, channel, at]) => `${channel}${at}`);

describe('toShed', () => {
  it('takes the largest audience down first, its newest first, whoever came last overall', () => {
    const crowd: Member[] = [
      [1, 'a', 1],
      [1, 'a', 2],
      [1, 'a', 3],
      [1, 'a', 4],
      [2, 'b', 5],
      [2, 'b', 6],
      [3, 'c', 7],
    ];
    expect(shed(crowd, 2)).toEqual(['a4', 'a3']);
    // Levelled: once a is down to b's size, they give in turn (a first, holding the oldest).
    expect(shed(crowd, 4)).toEqual(['a4', 'a3', 'a2', 'b6']);
    expect(shed(crowd, 10)).toHaveLength(7);
  });

  it('takes the tenant with the most viewers down first, however many channels they are spread over', () => {
    const crowd: Member[] = [
      // Tenant 1: three channels of three viewers.
      ...(['a', 'b', 'c'] as const).flatMap((channel, index): Member[] =>
        [1, 2, 3].map((at) => [1, channel, index * 10 + at]),
      ),
      // Tenant 2: one channel of five, the largest audience.
      ...[41, 42, 43, 44, 45].map((at): Member => [2, 'd', at]),
    ];
    // Tenant 1's nine give until they are down to tenant 2's five, its audiences in turn.
    expect(shed(crowd, 4)).toEqual(['a3', 'b13', 'c23', 'a2']);
    // Then the two tenants in turn (the first seen first on a tie).
    expect(shed(crowd, 6)).toEqual(['a3', 'b13', 'c23', 'a2', 'b12', 'd45']);
  });

  it('is the newest first within one audience', () => {
    const audience: Member[] = [
      [1, 'a', 3],
      [1, 'a', 1],
      [1, 'a', 2],
    ];
    expect(shed(audience, 2)).toEqual(['a3', 'a2']);
  });
});
