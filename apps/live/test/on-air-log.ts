import { pino, type Logger } from 'pino';

/**
 * A logger for a live process under test or bench that keeps each channel's first keyframe
 * (wall clock, ms) and the time from it to the first segment (ms) from the session's
 * "publisher on air" line, written when its first segment is listed; lines at `stderrLevel` and
 * above still reach stderr.
 */
export function onAirLog(stderrLevel: number): {
  log: Logger;
  firstKeyframes: Map<string, number>;
  keyframeToSegment: Map<string, number>;
} {
  const firstKeyframes = new Map<string, number>();
  const keyframeToSegment = new Map<string, number>();
  const log = pino(
    { level: 'info' },
    {
      write(line: string) {
        const entry = JSON.parse(line) as {
          level: number;
          msg: string;
          time: number;
          channelId?: string;
          keyframeToSegmentMs?: number | null;
        };
        if (entry.msg === 'publisher on air' && entry.channelId && entry.keyframeToSegmentMs != null) {
          firstKeyframes.set(entry.channelId, entry.time - entry.keyframeToSegmentMs);
          keyframeToSegment.set(entry.channelId, entry.keyframeToSegmentMs);
        }
        if (entry.level >= stderrLevel) process.stderr.write(line);
      },
    },
  );
  return { log, firstKeyframes, keyframeToSegment };
}
