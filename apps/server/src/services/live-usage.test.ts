import { describe, expect, it } from 'vitest';
import { summarizeLiveUsage, type LiveUsageHour } from './live-usage.ts';

const hour = (channelId: string, at: string, figures: Partial<LiveUsageHour> = {}): LiveUsageHour => ({
  channelId,
  hour: at,
  connectedSeconds: 0,
  connections: 0,
  maxConcurrent: 0,
  bytesIn: 0,
  hlsRequests: 0,
  hlsBytesOut: 0,
  publishingSeconds: 0,
  hlsMaxViewers: 0,
  ...figures,
});

describe('summarizeLiveUsage', () => {
  it('adds counters per channel, per channel and day, per day and in total', () => {
    const report = summarizeLiveUsage([
      hour('b', '2026-11-02T10', { connectedSeconds: 30, connections: 1, hlsRequests: 5, hlsBytesOut: 500 }),
      hour('a', '2026-11-01T23', {
        connectedSeconds: 60,
        connections: 2,
        bytesIn: 1000,
        hlsRequests: 7,
        publishingSeconds: 45,
      }),
      hour('a', '2026-11-02T00', { connectedSeconds: 40, bytesIn: 400, hlsRequests: 3 }),
    ]);
    expect(report.channels.map((channel) => channel.channelId)).toEqual(['a', 'b']);
    expect(report.channels[0]).toMatchObject({
      connectedSeconds: 100,
      connections: 2,
      bytesIn: 1400,
      hlsRequests: 10,
    });
    expect(report.channels[0]!.daily.map(({ day, hlsRequests }) => [day, hlsRequests])).toEqual([
      ['2026-11-01', 7],
      ['2026-11-02', 3],
    ]);
    expect(report.daily.map(({ day, connectedSeconds }) => [day, connectedSeconds])).toEqual([
      ['2026-11-01', 60],
      ['2026-11-02', 70],
    ]);
    expect(report.total).toEqual({
      connectedSeconds: 130,
      connections: 3,
      maxConcurrent: 0,
      bytesIn: 1400,
      hlsRequests: 15,
      hlsBytesOut: 500,
      publishingSeconds: 45,
      hlsMaxViewers: 0,
    });
  });

  it('takes the organization peak as the largest sum of channel peaks within one hour', () => {
    const report = summarizeLiveUsage([
      hour('a', '2026-11-01T10', { maxConcurrent: 1, hlsMaxViewers: 3 }),
      hour('b', '2026-11-01T10', { maxConcurrent: 1, hlsMaxViewers: 4 }),
      hour('c', '2026-11-01T11', { maxConcurrent: 1, hlsMaxViewers: 9 }),
      hour('a', '2026-11-02T10', { maxConcurrent: 1 }),
    ]);
    expect(report.channels.map((channel) => channel.maxConcurrent)).toEqual([1, 1, 1]);
    expect(report.daily.map((day) => day.maxConcurrent)).toEqual([2, 1]);
    expect(report.total.maxConcurrent).toBe(2);
    // HLS viewers the same way: 3 + 4 at 10:00 is less than 9 at 11:00.
    expect(report.channels.map((channel) => channel.hlsMaxViewers)).toEqual([3, 4, 9]);
    expect(report.daily.map((day) => day.hlsMaxViewers)).toEqual([9, 0]);
  });

  it('reports nothing for no hours', () => {
    expect(summarizeLiveUsage([])).toEqual({
      channels: [],
      daily: [],
      total: {
        connectedSeconds: 0,
        connections: 0,
        maxConcurrent: 0,
        bytesIn: 0,
        hlsRequests: 0,
        hlsBytesOut: 0,
        publishingSeconds: 0,
        hlsMaxViewers: 0,
      },
    });
  });
});
