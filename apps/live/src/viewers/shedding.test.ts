import { describe, expect, it } from 'vitest';
import { toShed } from './shedding.ts';

/** `[channel, admitted at]` pairs, named `{channel}{admitted at}`. */
const members = (pairs: [string, number][]) =>
  pairs.map(([channel, at]) => ({ channel, at, name: `${channel}${at}` }));
const shed = (pairs: [string, number][], count: number) =>
  toShed(
    members(pairs),
    count,
    (member) => member.channel,
    (member) => member.at,
  ).map((member) => member.name);

describe('toShed', () => {
  it('takes the largest audience down first, its newest first, whoever came last overall', () => {
    const crowd: [string, number][] = [
      ['a', 1],
      ['a', 2],
      ['a', 3],
      ['a', 4],
      ['b', 5],
      ['b', 6],
      ['c', 7],
    ];
    expect(shed(crowd, 2)).toEqual(['a4', 'a3']);
    // Levelled: once a is down to b's size, they give in turn (a first, holding the oldest).
    expect(shed(crowd, 4)).toEqual(['a4', 'a3', 'a2', 'b6']);
    expect(shed(crowd, 10)).toHaveLength(7);
  });

  it('is the newest first within one audience', () => {
    expect(
      shed(
        [
          ['a', 3],
          ['a', 1],
          ['a', 2],
        ],
        2,
      ),
    ).toEqual(['a3', 'a2']);
  });
});
