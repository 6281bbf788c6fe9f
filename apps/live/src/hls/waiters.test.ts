import { describe, expect, it } from 'vitest';
import { Waiters } from './waiters.ts';

describe('waiters grouped by the point they wait for', () => {
  it('checks each point once per change and wakes its waiters once', () => {
    const waiters = new Waiters<number>();
    const woken: string[] = [];
    for (const name of ['a', 'b', 'c']) waiters.add(5, 5, () => woken.push(`${name} 5`));
    waiters.add(6, 6, () => woken.push('d 6'));
    const checked: number[] = [];
    const upTo = (newest: number) => (point: number) => {
      checked.push(point);
      return point <= newest;
    };

    waiters.wakeReached(upTo(4));
    expect(woken).toEqual([]);
    expect(checked).toEqual([5, 6]);

    waiters.wakeReached(upTo(5));
    expect(woken).toEqual(['a 5', 'b 5', 'c 5']);
    checked.length = 0;
    waiters.wakeReached(upTo(5));
    // Point 5 is forgotten once its waiters are woken.
    expect(checked).toEqual([6]);
    expect(woken).toHaveLength(3);

    waiters.wakeReached(() => true);
    expect(woken).toEqual(['a 5', 'b 5', 'c 5', 'd 6']);
  });

  it('forgets a cancelled waiter, and a point with none left', () => {
    const waiters = new Waiters<number>();
    const woken: string[] = [];
    const cancelA = waiters.add(1, 1, () => woken.push('a'));
    waiters.add(1, 1, () => woken.push('b'));
    const cancelC = waiters.add(2, 2, () => woken.push('c'));
    cancelA();
    cancelC();
    const checked: number[] = [];
    waiters.wakeReached((point) => {
      checked.push(point);
      return true;
    });
    expect(woken).toEqual(['b']);
    expect(checked).toEqual([1]);
    // A cancel after the wake (a timeout racing it) changes nothing, nor does it drop a newer group.
    const cancelD = waiters.add(3, 3, () => woken.push('d'));
    cancelD();
    cancelD();
    waiters.add(3, 3, () => woken.push('e'));
    cancelA();
    waiters.wakeReached(() => true);
    expect(woken).toEqual(['b', 'e']);
  });
});
