import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.ts';

describe('loadConfig: live ICE settings', () => {
  it('reads a UDP port range and announced addresses', () => {
    const config = loadConfig({
      LIVE_ICE_PORT_RANGE: '40000-40199',
      LIVE_ICE_ADDRESSES: ' 203.0.113.7, 10.0.0.5 ,',
    });
    expect(config.LIVE_ICE_PORT_RANGE).toEqual([40000, 40199]);
    expect(config.LIVE_ICE_ADDRESSES).toEqual(['203.0.113.7', '10.0.0.5']);
  });

  it('leaves both unset by default', () => {
    const config = loadConfig({});
    expect(config.LIVE_ICE_PORT_RANGE).toBeUndefined();
    expect(config.LIVE_ICE_ADDRESSES).toEqual([]);
  });

  it.each(['40000', '40199-40000', '80-90', '40000-70000', 'a-b'])('refuses the range %s', (range) => {
    expect(() => loadConfig({ LIVE_ICE_PORT_RANGE: range })).toThrow(
      /LIVE_ICE_PORT_RANGE: must be first-last/,
    );
  });
});
