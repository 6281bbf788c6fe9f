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

describe('loadConfig: EDGE_MAX_FRAMES', () => {
  it('allows 1000 frames unless set', () => {
    expect(loadConfig({}).EDGE_MAX_FRAMES).toBe(1000);
    expect(loadConfig({ EDGE_MAX_FRAMES: '50' }).EDGE_MAX_FRAMES).toBe(50);
  });

  it.each(['0', '-1', '2.5', 'many'])('refuses %s', (value) => {
    expect(() => loadConfig({ EDGE_MAX_FRAMES: value })).toThrow(/EDGE_MAX_FRAMES/);
  });
});
