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
    viewers.close();
  });

  it('reports at most MAX_REPORTED viewers of a channel at a time', async () => {
    vi.useFakeTimers();
    const sent: ViewersReport[] = [];
    const viewers = new PeerViewers(async (_, report) => void sent.push(report));
    for (let n = 0; n <= MAX_REPORTED; n++) viewers.seen('http://holder', 'aa', `viewer ${n}`);
    await vi.advanceTimersByTimeAsync(REPORT_MS);
    expect(sent[0]!.clients).toHaveLength(MAX_REPORTED);
    viewers.close();
  });
});
