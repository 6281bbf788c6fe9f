import type { ViewerProcessSettings } from '../viewers/viewer-process.ts';

/** A viewer process's settings as the tests start one: no viewer to turn away. */
export const TEST_VIEWER_SETTINGS: ViewerProcessSettings = {
  ice: { additionalHostAddresses: [] },
  iceGatheringTimeoutMs: 2_000,
  hls: {
    maxLoad: 1,
    loadWindowMs: 1_000,
    quietMs: 15_000,
    admissionWaitMs: 3_000,
    trustProxy: false,
    keepAliveMs: 5_000,
  },
};
