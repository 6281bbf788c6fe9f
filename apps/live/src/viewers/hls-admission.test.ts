import { afterEach, describe, expect, it, vi } from 'vitest';
import { HlsAdmission } from './hls-admission.ts';

const WAIT_MS = 3_000;
const CHANNEL = { organizationId: 1, channelId: 'channel' };
/** A tenant's two channels, and another tenant's one with a larger audience than either. */
const FIRST = { organizationId: 1, channelId: 'first' };
const SECOND = { organizationId: 1, channelId: 'second' };
const CROWDED = { organizationId: 2, channelId: 'crowded' };

/**
 * A load guard that admits while `room` lasts, counts who is held, starves on demand, and closes
 * a window when told.
 */
function stubGuard(room: number) {
  const guard = {
    room,
    held: 0,
    shed: (_count: number) => {},
    closeWindow: () => {},
    admit: () => {
      if (guard.room <= 0) return false;
      guard.room--;
      guard.held++;
      return true;
    },
    left: () => {
      guard.held--;
    },
    whenStarving: (shed: (count: number) => void) => {
      guard.shed = shed;
    },
    whenWindowCloses: (listener: () => void) => {
      guard.closeWindow = listener;
    },
    close: () => {},
  };
  return guard;
}

/** An admission over stubGuard(room), on fake timers from the epoch. */
function admissionWith(room: number, onShed: (count: number) => void = () => {}) {
  vi.useFakeTimers({ now: 0 });
  const guard = stubGuard(room);
  return { guard, admission: new HlsAdmission(guard, 15_000, WAIT_MS, onShed) };
}

/** What a pending admission has resolved to so far (undefined: still waiting). */
function settled(promise: Promise<boolean>) {
  const state: { value?: boolean } = {};
  void promise.then((value) => (state.value = value));
  return state;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('HlsAdmission', () => {
  it('keeps serving the clients it admitted when the guard has no room for more', async () => {
    const { guard, admission } = admissionWith(2);
    expect(await admission.admit(CHANNEL, '127.0.0.1 a', 0)).toBe(true);
    expect(await admission.admit(CHANNEL, '127.0.0.1 b', 0)).toBe(true);
    const third = settled(admission.admit(CHANNEL, '127.0.0.1 c', 0));
    // The admitted ones' reloads and parts go on, and count once each, while the third waits.
    for (let at = 400; at <= 2_400; at += 400)
      expect(await admission.admit(CHANNEL, '127.0.0.1 a', at)).toBe(true);
    expect(await admission.admit(CHANNEL, '127.0.0.1 b', 2_400)).toBe(true);
    expect(third.value).toBeUndefined();
    await vi.advanceTimersByTimeAsync(WAIT_MS);
    expect(third.value).toBe(false);
    expect(guard.held).toBe(2);
    admission.close();
  });

  it('lets the waiting in at the next window with room, oldest first, and newcomers queue behind them', async () => {
    const { guard, admission } = admissionWith(1);
    expect(await admission.admit(CHANNEL, 'first', 0)).toBe(true);
    const second = settled(admission.admit(CHANNEL, 'second', 0));
    const secondAgain = settled(admission.admit(CHANNEL, 'second', 0));
    const third = settled(admission.admit(CHANNEL, 'third', 0));
    expect(admission.waitingCount).toBe(3);
    // A window with no room leaves them waiting.
    guard.closeWindow();
    await Promise.resolve();
    expect([second.value, third.value]).toEqual([undefined, undefined]);
    guard.room = 1;
    // Room for one: it goes to the oldest waiting, not to a newcomer asking now.
    const newcomer = settled(admission.admit(CHANNEL, 'newcomer', 0));
    expect(newcomer.value).toBeUndefined();
    guard.closeWindow();
    await Promise.resolve();
    // Both requests of the second client are let in by the one admission.
    expect([second.value, secondAgain.value, third.value]).toEqual([true, true, undefined]);
    expect(guard.held).toBe(2);
    guard.room = 5;
    guard.closeWindow();
    await Promise.resolve();
    expect([third.value, newcomer.value]).toEqual([true, true]);
    expect(admission.waitingCount).toBe(0);
    admission.close();
  });

  it('refuses a newcomer at once while too many wait, and those still waiting when it closes', async () => {
    const { admission } = admissionWith(0);
    const waiting = Array.from({ length: 4_000 }, (_, index) =>
      settled(admission.admit(CHANNEL, `client ${index}`, 0)),
    );
    expect(await admission.admit(CHANNEL, 'one too many', 0)).toBe(false);
    expect(admission.waitingCount).toBe(4_000);
    admission.close();
    await Promise.resolve();
    expect(waiting.every((state) => state.value === false)).toBe(true);
    expect(admission.waitingCount).toBe(0);
  });

  it("keeps at most 8 requests of one client waiting, so that it cannot take a crowd's places", async () => {
    const { guard, admission } = admissionWith(0);
    const own = Array.from({ length: 8 }, () => settled(admission.admit(CHANNEL, 'greedy', 0)));
    expect(await admission.admit(CHANNEL, 'greedy', 0)).toBe(false);
    const other = settled(admission.admit(CHANNEL, 'another', 0));
    expect(admission.waitingCount).toBe(9);
    guard.room = 2;
    guard.closeWindow();
    await Promise.resolve();
    expect(own.every((state) => state.value === true)).toBe(true);
    expect(other.value).toBe(true);
    // Its places are free again once answered.
    guard.room = 0;
    const again = Array.from({ length: 8 }, () => settled(admission.admit(CHANNEL, 'greedy again', 0)));
    expect(admission.waitingCount).toBe(8);
    admission.close();
    await Promise.resolve();
    expect(again.every((state) => state.value === false)).toBe(true);
  });

  it('forgets a client quiet for longer than quietMs: the guard gets its room back', async () => {
    const { guard, admission } = admissionWith(1);
    expect(await admission.admit(CHANNEL, 'gone', 0)).toBe(true);
    const refused = settled(admission.admit(CHANNEL, 'refused', 10_000));
    await vi.advanceTimersByTimeAsync(WAIT_MS);
    expect(refused.value).toBe(false);
    guard.room = 1;
    // Another's request notices the quiet one is gone, before asking the guard for room.
    expect(await admission.admit(CHANNEL, 'refused', 15_001)).toBe(true);
    expect(guard.held).toBe(1);
    // Back after its absence, it asks like a newcomer.
    const back = settled(admission.admit(CHANNEL, 'gone', 15_002));
    await vi.advanceTimersByTimeAsync(WAIT_MS);
    expect(back.value).toBe(false);
    admission.close();
  });

  it('forgets the quiet without a request, so that the guard counts only who still watches', async () => {
    const { guard, admission } = admissionWith(2);
    expect(await admission.admit(CHANNEL, 'watching', Date.now())).toBe(true);
    expect(await admission.admit(CHANNEL, 'leaving', Date.now())).toBe(true);
    vi.advanceTimersByTime(10_000);
    expect(await admission.admit(CHANNEL, 'watching', Date.now())).toBe(true);
    vi.advanceTimersByTime(6_000);
    expect(guard.held).toBe(1);
    admission.close();
  });

  it('sheds the newest admitted first when the guard starves, and says how many', async () => {
    const shed: number[] = [];
    const { guard, admission } = admissionWith(3, (count) => shed.push(count));
    for (const client of ['first', 'second', 'third'])
      expect(await admission.admit(CHANNEL, client, 0)).toBe(true);
    // The oldest asked last: shedding goes by admission, not by the latest request.
    expect(await admission.admit(CHANNEL, 'first', 100)).toBe(true);
    guard.shed(2);
    expect(shed).toEqual([2]);
    expect(guard.held).toBe(1);
    expect(await admission.admit(CHANNEL, 'first', 200)).toBe(true);
    // The shed ask again like newcomers: no room, so they wait and are refused.
    const third = settled(admission.admit(CHANNEL, 'third', 200));
    await vi.advanceTimersByTimeAsync(WAIT_MS);
    expect(third.value).toBe(false);
    admission.close();
  });

  it("sheds the tenant with the most clients first, though another tenant's channel has the largest audience", async () => {
    const { guard, admission } = admissionWith(7);
    for (const viewer of ['a', 'b']) expect(await admission.admit(FIRST, viewer, 0)).toBe(true);
    for (const viewer of ['c', 'd']) expect(await admission.admit(SECOND, viewer, 0)).toBe(true);
    // Admitted last of all, yet the first tenant's newest go before them.
    for (const viewer of ['e', 'f', 'g']) expect(await admission.admit(CROWDED, viewer, 0)).toBe(true);
    guard.shed(2);
    expect(guard.held).toBe(5);
    for (const viewer of ['e', 'f', 'g']) expect(await admission.admit(CROWDED, viewer, 100)).toBe(true);
    expect(await admission.admit(FIRST, 'a', 100)).toBe(true);
    expect(await admission.admit(SECOND, 'c', 100)).toBe(true);
    expect(guard.held).toBe(5);
    // The newest of each of its channels was shed: they ask again, and there is no room.
    const shed = [settled(admission.admit(FIRST, 'b', 100)), settled(admission.admit(SECOND, 'd', 100))];
    await vi.advanceTimersByTimeAsync(WAIT_MS);
    expect(shed.map(({ value }) => value)).toEqual([false, false]);
    admission.close();
  });
});
