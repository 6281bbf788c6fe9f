// Animations through the edge (issue 14) against the tools it wraps, in one interleaved run:
// - GIF: a 640x480 animated GIF of 12 frames to a ~400 px wide animated GIF, every width new
//   (a miss): CPU per request of the edge process <= 1.10x a bare sharp script doing the same
//   resize with the same encoder settings;
// - MP4: the same GIF with f=mp4 at ~400 px: CPU per request of the edge's process tree (the
//   shell that starts its ffmpeg, and the ffmpeg processes) <= 1.10x the ffmpeg command line
//   making the same video from the GIF file, run by a shell (xargs, two at a time): the edge's
//   x264 settings, a lanczos scale, and the same frames at the same times (the edge's closing
//   1 ms copy of the last frame, which makes the video last as long as the animation: without
//   it ffmpeg 5.1 gives the last frame 1/50 s). The two videos' frames, times and sizes are
//   compared at the end.
// The server runs on PostgreSQL (lib.ts) so that the database's work is not counted in the
// process measured. Rounds alternate between the edge and its reference so that machine noise
// hits both alike; the load average is reported beside the figures.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { cpuMsOf, mean, photoLike, pool, processTree, report, round2, serveFiles, startEdge } from './lib.ts';

// Two cores: one conversion on each.
const CONCURRENCY = 2;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MISSES_PER_ROUND = Number(process.env.BENCH_MISSES ?? 12);
const FRAMES = 12;

/** The edge's GIF answer to `w=`, as a sharp user writes it (sharp keeps delays and loop). */
const sharpGif = (input: Buffer, width: number) =>
  sharp(input, { animated: true }).resize({ width }).gif().toBuffer();

/**
 * The edge's f=mp4 answers to `w=` (even widths) as an ffmpeg user writes them, for a shell
 * (`{}`: the width): the frames scaled, a copy of the last `closingMs` into the video (at
 * millisecond times, -r 1000, so that it lasts 1 ms), H.264 as the edge encodes it.
 */
const ffmpegMp4 = (input: string, closingMs: number, output: string) =>
  [
    ...['ffmpeg', '-v', 'error', '-i', input, '-vf'],
    `"scale={}:-2:flags=lanczos,tpad=stop_mode=clone:stop=1,settb=1/1000,setpts='if(eq(N,${FRAMES}),${closingMs},PTS)'"`,
    ...['-an', '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-threads', '1', '-bf', '0'],
    ...['-pix_fmt', 'yuv420p', '-fps_mode', 'passthrough', '-r', '1000', '-movflags', '+faststart'],
    ...['-y', output],
  ].join(' ');

/**
 * CPU of the command lines for `widths`, two at a time (xargs -P), counted from this process's
 * children: the shell, xargs and every ffmpeg, all waited for.
 */
function cliMp4(input: string, closingMs: number, widths: number[], outputDir: string): number {
  const command = ffmpegMp4(input, closingMs, join(outputDir, '{}.mp4'));
  const script = `printf '%s\\n' ${widths.join(' ')} | xargs -P ${CONCURRENCY} -I {} sh -c "$0"`;
  const children = () => cpuMsOf(process.pid, { children: true }) - cpuMsOf(process.pid);
  const before = children();
  const run = spawnSync('sh', ['-c', script, command], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`ffmpeg command line failed: ${run.stderr}`);
  return children() - before;
}

/** CPU of a process and of all below it, the ones running and the ones waited for. */
const cpuOfTree = (pid: number) =>
  processTree(pid).reduce((sum, each) => sum + cpuMsOf(each, { children: true }), 0);

// The GIF reference: the same conversions with nothing around them, in their own process.
if (process.argv[2] === 'bare') {
  const [, , , inputPath, widthsJson] = process.argv;
  const input = readFileSync(inputPath!);
  const widths = JSON.parse(widthsJson!) as number[];
  for (const width of [200, 202]) await sharpGif(input, width);
  const before = process.cpuUsage();
  await pool(widths, CONCURRENCY, async (width) => {
    await sharpGif(input, width);
  });
  const used = process.cpuUsage(before);
  process.stdout.write(JSON.stringify({ cpuMs: (used.user + used.system) / 1000 }));
  process.exit(0);
}

// Frames of a drifting picture (blurred noise), each shown 40, 60 or 80 ms: every frame
// differs from the last, as in a real animation.
const WIDTH = 640;
const HEIGHT = 480;
const strip = await photoLike(WIDTH * 2, HEIGHT, { sigma: 50, blur: 3 })
  .png()
  .toBuffer();
const frames = await Promise.all(
  Array.from({ length: FRAMES }, (_, i) =>
    sharp(strip)
      .extract({ left: Math.round((i * WIDTH) / FRAMES), top: 0, width: WIDTH, height: HEIGHT })
      .png()
      .toBuffer(),
  ),
);
const delays = frames.map((_, i) => [40, 60, 80][i % 3]!);
const animation = await sharp(frames, { join: { animated: true } })
  .gif({ delay: delays, loop: 0 })
  .toBuffer();
const work = mkdtempSync(join(tmpdir(), 'ukiyo-bench-animation-'));
const inputPath = join(work, 'anim.gif');
writeFileSync(inputPath, animation);
const videos = mkdtempSync(join(work, 'videos-'));
const totalMs = delays.reduce((sum, delay) => sum + delay, 0);
const closingMs = totalMs - 1;

/** A video's frames as ffprobe reads them: each one's time and duration; size and pixels. */
function probe(file: string) {
  const args = ['-v', 'error', '-show_streams', '-show_packets', '-show_format', '-of', 'json', file];
  const run = spawnSync('ffprobe', args, { encoding: 'utf8' });
  const { streams, packets, format } = JSON.parse(run.stdout) as {
    streams: Array<{ width: number; height: number; pix_fmt: string; nb_frames: string }>;
    packets: Array<{ pts_time: string; duration_time: string }>;
    format: { duration: string };
  };
  const [stream] = streams;
  const boxes = readFileSync(file).toString('latin1');
  return {
    width: stream?.width,
    height: stream?.height,
    pixels: stream?.pix_fmt,
    frames: Number(stream?.nb_frames),
    durationMs: Math.round(Number(format.duration) * 1000),
    times: packets.map((packet) => [Number(packet.pts_time), Number(packet.duration_time)]),
    moovFirst: boxes.indexOf('moov') < boxes.indexOf('mdat'),
  };
}
const startLoad = round2(loadavg()[0]!);

const origin = await serveFiles({ '/anim.gif': { contentType: 'image/gif', body: animation } });
const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
const edge = await startEdge({
  origin: { host: `127.0.0.1:${origin.port}`, pathPrefix: '' },
  probePath: '/w=10/anim.gif',
  agent,
  // On a machine shared with other work a GIF miss (~1 s of CPU) can pass the 10 s defaults.
  env: { EDGE_TRANSFORM_TIMEOUT_MS: '60000', EDGE_TRANSFORM_WAIT_MS: '60000' },
});
try {
  const { pid, get } = edge;

  /**
   * Each round's widths, new to the edge's cache, around 400 px: 400 ± 8n, so that both sides
   * are even (a 4:3 picture 8n wide is 6n high) and no video is padded. The command line rounds
   * an odd side (`-2`) where the edge pads it with a row (a crop-free resize keeps the aspect),
   * which costs a conversion to RGB and back: not the same conversion.
   */
  const widthSequence = () => {
    let n = 0;
    return () =>
      Array.from({ length: MISSES_PER_ROUND }, () => {
        n++;
        return 400 + 8 * Math.ceil(n / 2) * (n % 2 === 1 ? 1 : -1);
      });
  };
  const kinds = {
    gif: (w: number) => `/w=${w}/anim.gif`,
    mp4: (w: number) => `/w=${w},f=mp4/anim.gif`,
  };
  const cpu: Record<keyof typeof kinds, { edge: number[]; bare: number[] }> = {
    gif: { edge: [], bare: [] },
    mp4: { edge: [], bare: [] },
  };
  for (const [kind, path] of Object.entries(kinds) as Array<[keyof typeof kinds, (w: number) => string]>) {
    const nextWidths = widthSequence();
    const miss = async (w: number) => {
      // A keep-alive socket the edge closes after 5 s idle (while the reference runs) can fail
      // the request written on it as it closes: that request never reached the edge.
      const answer = await get(path(w)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ECONNRESET') throw error;
        return get(path(w));
      });
      if (answer.status !== 200) throw new Error(`edge answered ${answer.status}: ${answer.body.toString()}`);
    };
    await pool(nextWidths().slice(0, 4), CONCURRENCY, miss); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      const widths = nextWidths();
      const before = cpuOfTree(pid);
      await pool(widths, CONCURRENCY, miss);
      cpu[kind].edge.push((cpuOfTree(pid) - before) / widths.length);
      if (kind === 'mp4') {
        cpu.mp4.bare.push(cliMp4(inputPath, closingMs, widths, videos) / widths.length);
        continue;
      }
      const bare = spawnSync(
        process.execPath,
        ['--import', 'tsx', fileURLToPath(import.meta.url), 'bare', inputPath, JSON.stringify(widths)],
        { encoding: 'utf8' },
      );
      if (bare.status !== 0) throw new Error(`bare sharp failed: ${bare.stderr}`);
      cpu.gif.bare.push((JSON.parse(bare.stdout) as { cpuMs: number }).cpuMs / widths.length);
    }
  }

  // What the edge sent is the animation: every frame, at its delays; its video is the command
  // line's: the same size, pixel format, frames and times, `moov` first.
  const gif = await get(kinds.gif(400));
  const gifMeta = await sharp(gif.body, { animated: true }).metadata();
  const video = await get(kinds.mp4(400));
  const edgeVideo = join(videos, 'edge.mp4');
  writeFileSync(edgeVideo, video.body);
  cliMp4(inputPath, closingMs, [400], videos);
  const [edgeProbe, cliProbe] = [edgeVideo, join(videos, '400.mp4')].map(probe);

  report(
    'animation',
    {
      gifMissCpuMsPerRequest: round2(mean(cpu.gif.edge)),
      bareSharpGifCpuMsPerRequest: round2(mean(cpu.gif.bare)),
      gifCpuRatio: round2(mean(cpu.gif.edge) / mean(cpu.gif.bare)),
      mp4MissCpuMsPerRequest: round2(mean(cpu.mp4.edge)),
      ffmpegMp4CpuMsPerRequest: round2(mean(cpu.mp4.bare)),
      mp4CpuRatio: round2(mean(cpu.mp4.edge) / mean(cpu.mp4.bare)),
      gifFrames: gifMeta.pages ?? 1,
      gifDelaysKept: JSON.stringify(gifMeta.delay) === JSON.stringify(delays) ? 1 : 0,
      // The frames and the 1 ms copy of the last that closes its delay.
      mp4Frames: edgeProbe!.frames,
      mp4DurationMs: edgeProbe!.durationMs,
      mp4SameAsCommandLine: JSON.stringify(edgeProbe) === JSON.stringify(cliProbe) ? 1 : 0,
      gifBytes: gif.body.length,
      mp4Bytes: video.body.length,
      loadavg1Start: startLoad,
      loadavg1End: round2(loadavg()[0]!),
    },
    {
      gifCpuRatio: '<= 1.10',
      mp4CpuRatio: '<= 1.10',
      gifFrames: `= ${FRAMES}`,
      gifDelaysKept: '= 1',
      mp4Frames: `= ${FRAMES + 1}`,
      mp4DurationMs: `= ${totalMs}`,
      mp4SameAsCommandLine: '= 1',
    },
  );
} finally {
  await edge.stop();
  agent.destroy();
  origin.close();
}
