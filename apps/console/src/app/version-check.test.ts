import { describe, expect, it, vi } from 'vitest';
import { createVersionCheck } from './version-check.ts';

describe('deployed version check', () => {
  it('remembers the first ETag and reports a change when the server answers 412', async () => {
    const fetchMock = vi
      .fn<typeof fetch>()
      .mockResolvedValueOnce(new Response(null, { status: 200, headers: { ETag: '"a"' } }))
      .mockResolvedValueOnce(new Response(null, { status: 200 }))
      .mockResolvedValueOnce(new Response(null, { status: 412 }))
      .mockRejectedValueOnce(new TypeError('offline'));
    const changed = createVersionCheck(fetchMock);
    expect(await changed()).toBe(false);
    expect(await changed()).toBe(false);
    expect(await changed()).toBe(true);
    expect(await changed()).toBe(false);
    expect(fetchMock.mock.calls[0]).toEqual([
      '/index.html',
      expect.objectContaining({ method: 'HEAD', headers: {} }),
    ]);
    expect(fetchMock.mock.calls[2]).toEqual([
      '/index.html',
      expect.objectContaining({ method: 'HEAD', headers: { 'If-Match': '"a"' } }),
    ]);
  });
});
