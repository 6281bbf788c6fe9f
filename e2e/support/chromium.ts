/** Debian's Chromium (never a downloaded browser), as the browser tests and benches start it. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Headless and quiet on a closed network (no background connections, which the machine
 * refuses), with real host ICE candidates rather than mDNS names: werift cannot resolve .local.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-features=WebRtcHideLocalIpsWithMdns',
];
