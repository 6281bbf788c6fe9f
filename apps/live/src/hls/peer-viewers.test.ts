import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_REPORTED, PeerViewers, REPORT_MS, type ViewersReport } from './peer-viewers.ts';

afterEach(() => vi.useRealTimers());

describe('PeerViewers', () => {
  it('reports each channel’s distinct viewers to its holder once per interval, then starts afresh', async () => {
    vi.useFakeTimers();
    const sent: [string, ViewersReport][] = [];
    const viewers = new PeerViewers(async (peer, report) => void sent.push([peer, report]));
    viewers.seen('http://holder-a', 'aa', 'viewer 1');
    viewers.seen('http://holder-a', 'aa', 'viewer 1');
    viewers.seen('http://holder-a', 'aa', 'viewer 2');
    viewers.seen('http://holder-b', 'bb', 'viewer 1');
    await vi.advanceTimersByTimeAsync(REPORT_MS);
    expect(sent).toEqual([
      ['http://holder-a', { channelId: 'aa', clients: ['viewer 1', 'viewer 2'] }],
      ['http://holder-b', { channelId: 'bb', clients: ['viewer 1'] }],
    ]);
    await vi.advanceTimersByTimeAsync(REPORT_MS);
    expect(sent).toHaveLength(2);
    await viewers.close();
  });

  it('sends what it saw since the last report when it closes, and nothing after', async () => {
    vi.useFakeTimers();
    const sent: ViewersReport[] = [];
    let settle = () => {};
    const viewers = new PeerViewers(async (_, report) => {
      sent.push(report);
      await new Promise<void>((resolve) => (settle = resolve));
    });
    viewers.seen('http://holder', 'aa', 'viewer 1');
    let closed = false;
    const closing = viewers.close().then(() => (closed = true));
    expect(sent).toEqual([{ channelId: 'aa', clients: ['viewer 1'] }]);
    // Closing waits for the holder's answer.
    await Promise.resolve();
    expect(closed).toBe(false);
    settle();
    await closing;
    viewers.seen('http://holder', 'aa', 'viewer 2');
    await vi.advanceTimersByTimeAsync(REPORT_MS * 2);
    expect(sent).toHaveLength(1);
  });

  it('reports at most MAX_REPORTED viewers of a channel at a time', async () => {
    vi.useFakeTimers();
    const sent: ViewersReport[] = [];
    const viewers = new PeerViewers(async (_, report) => void sent.push(report));
    for (let n = 0; n <= MAX_REPORTED; n++) viewers.seen('http://holder', 'aa', `viewer ${n}`);
    await vi.advanceTimersByTimeAsync(REPORT_MS);
    expect(sent[0]!.clients).toHaveLength(MAX_REPORTED);
    await viewers.close();
  });
});
