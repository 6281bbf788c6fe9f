/**
 * Callbacks waiting for a stream to reach a point, grouped by the point. Players all wait for
 * the next part or the one after, so thousands of waiters share a handful of points: a change
 * checks each point once and wakes only the waiters of the points reached, instead of calling
 * every waiter to check for itself.
 */
export class Waiters<Point> {
  private readonly byPoint = new Map<string | number, { point: Point; wakes: Set<() => void> }>();

  /** `wake` is called once, at the first `wakeReached` that finds `point` reached; returns the cancel. */
  add(key: string | number, point: Point, wake: () => void): () => void {
    let group = this.byPoint.get(key);
    if (!group) {
      group = { point, wakes: new Set() };
      this.byPoint.set(key, group);
    }
    const { wakes } = group;
    wakes.add(wake);
    return () => {
      wakes.delete(wake);
      if (wakes.size === 0 && this.byPoint.get(key)?.wakes === wakes) this.byPoint.delete(key);
    };
  }

  /** Wakes and forgets the waiters of every point `reached` holds for. */
  wakeReached(reached: (point: Point) => boolean): void {
    for (const [key, group] of this.byPoint) {
      if (!reached(group.point)) continue;
      this.byPoint.delete(key);
      for (const wake of group.wakes) wake();
    }
  }
}
