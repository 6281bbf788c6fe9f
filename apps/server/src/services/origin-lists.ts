import type { Invalidation, Invalidations } from './invalidations.ts';

/**
 * How long an organization's presented origins are answered from memory. Edits made through the
 * console or the API drop them at once in every process (`originsOf`); what the edges write
 * themselves (an origin's status once loaded, the month's usage, which they flush every 2 s)
 * shows at most this much later.
 */
export const ORIGIN_LIST_MAX_AGE_MS = 1_000;
/** Organizations kept at most: the longest kept go first. */
const MAX_ORGANIZATIONS = 1_000;

interface Entry<T> {
  loadedAt: number;
  value: Promise<T>;
}

/**
 * The presented origins of each organization, `GET /api/v1/origins`'s answer (the Platform API's
 * most frequent call, a CI polling it): one read per organization and ORIGIN_LIST_MAX_AGE_MS
 * however many callers, concurrent ones sharing it. Only while every invalidation reaches this
 * process (Invalidations.live); else each call reads the database.
 */
export class OriginLists<T> {
  private readonly entries = new Map<number, Entry<T>>();

  constructor(
    private readonly invalidations: Invalidations,
    private readonly now: () => number = Date.now,
  ) {
    invalidations.on((event) => this.drop(event));
  }

  of(organizationId: number, load: () => Promise<T>): Promise<T> {
    if (!this.invalidations.live) return load();
    const now = this.now();
    const entry = this.entries.get(organizationId);
    if (entry && now - entry.loadedAt <= ORIGIN_LIST_MAX_AGE_MS) return entry.value;
    const value = load();
    const loaded = { loadedAt: now, value };
    this.entries.delete(organizationId);
    this.entries.set(organizationId, loaded);
    if (this.entries.size > MAX_ORGANIZATIONS) this.entries.delete(this.entries.keys().next().value!);
    // A failed read is not kept: the next call tries again.
    value.catch(() => {
      if (this.entries.get(organizationId) === loaded) this.entries.delete(organizationId);
    });
    return value;
  }

  private drop(event: Invalidation | 'everything'): void {
    if (event === 'everything') return this.entries.clear();
    for (const id of [event.originsOf, event.organizationId]) if (id !== undefined) this.entries.delete(id);
  }
}
