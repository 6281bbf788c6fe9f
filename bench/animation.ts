// Animations through the edge (issue 14) against the tools it wraps, in one interleaved run:
// - GIF: a 640x480 animated GIF of 12 frames to a ~400 px wide animated GIF, every width new
//   (a miss): CPU per request of the edge process <= 1.10x a bare sharp script doing the
//   same resize with the same encoder settings;
// - MP4: the same GIF with f=mp4 at ~400 px: CPU per request of the process and of the ffmpeg
//   it runs <= 1.10x the ffmpeg command line converting the GIF itself (its own GIF decoder,
//   a lanczos scale, the edge's x264 settings).
// The server runs on PostgreSQL (lib.ts) so that the database's work is not counted in the
// process measured. Rounds alternate between the edge and its reference so that machine noise
// hits both alike.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { cpuMsOf, mean, photoLike, pool, report, round2, serveFiles, startEdge } from './lib.ts';

// Two cores: one conversion on each.
const CONCURRENCY = 2;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MISSES_PER_ROUND = Number(process.env.BENCH_MISSES ?? 12);
const FRAMES = 12;

/** The edge's GIF answer to `w=`, as a sharp user writes it (sharp keeps delays and loop). */
const sharpGif = (input: Buffer, width: number) =>
  sharp(input, { animated: true }).resize({ width }).gif().toBuffer();

/** The edge's f=mp4 answer to `w=` (an even width), as an ffmpeg user writes it. */
const ffmpegMp4 = (input: string, width: number, output: string) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn('ffmpeg', [
      ...['-v', 'error', '-i', input, '-vf', `scale=${width}:-2:flags=lanczos`, '-an'],
      ...['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-threads', '1', '-bf', '0'],
      ...['-pix_fmt', 'yuv420p', '-fps_mode', 'passthrough', '-movflags', '+faststart', '-y', output],
    ]);
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`ffmpeg exited with ${code}`))));
  });

// The references: the same conversions with nothing around them, in their own process; the
// CPU counted includes the ffmpeg processes it waits for.
if (process.argv[2] === 'bare') {
  const [, , , kind, inputPath, widthsJson] = process.argv;
  const input = readFileSync(inputPath!);
  const widths = JSON.parse(widthsJson!) as number[];
  const out = mkdtempSync(join(tmpdir(), 'ukiyo-bench-animation-'));
  const convert = async (width: number) => {
    if (kind === 'gif') await sharpGif(input, width);
    else await ffmpegMp4(inputPath!, width, join(out, `${width}.mp4`));
  };
  for (const width of [200, 202]) await convert(width);
  const before = cpuMsOf(process.pid, { children: true });
  await pool(widths, CONCURRENCY, convert);
  process.stdout.write(JSON.stringify({ cpuMs: cpuMsOf(process.pid, { children: true }) - before }));
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
const inputPath = join(mkdtempSync(join(tmpdir(), 'ukiyo-bench-animation-')), 'anim.gif');
writeFileSync(inputPath, animation);

const origin = await serveFiles({ '/anim.gif': { contentType: 'image/gif', body: animation } });
const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
const edge = await startEdge({
  origin: { host: `127.0.0.1:${origin.port}`, pathPrefix: '' },
  probePath: '/w=10/anim.gif',
  agent,
});
try {
  const { pid, get } = edge;

  /** Each round's widths, new to the edge's cache; even, so that no video side is padded. */
  let width = 400;
  const nextWidths = () => Array.from({ length: MISSES_PER_ROUND }, () => (width += 2));
  const kinds = {
    gif: (w: number) => `/w=${w}/anim.gif`,
    mp4: (w: number) => `/w=${w},f=mp4/anim.gif`,
  };
  const cpu: Record<keyof typeof kinds, { edge: number[]; bare: number[] }> = {
    gif: { edge: [], bare: [] },
    mp4: { edge: [], bare: [] },
  };
  for (const [kind, path] of Object.entries(kinds) as Array<[keyof typeof kinds, (w: number) => string]>) {
    const miss = async (w: number) => {
      const answer = await get(path(w));
      if (answer.status !== 200) throw new Error(`edge answered ${answer.status}: ${answer.body.toString()}`);
    };
    await pool(nextWidths().slice(0, 4), CONCURRENCY, miss); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      const widths = nextWidths();
      const before = cpuMsOf(pid, { children: true });
      await pool(widths, CONCURRENCY, miss);
      cpu[kind].edge.push((cpuMsOf(pid, { children: true }) - before) / widths.length);
      const bare = spawnSync(
        process.execPath,
        ['--import', 'tsx', fileURLToPath(import.meta.url), 'bare', kind, inputPath, JSON.stringify(widths)],
        { encoding: 'utf8' },
      );
      if (bare.status !== 0) throw new Error(`bare ${kind} failed: ${bare.stderr}`);
      cpu[kind].bare.push((JSON.parse(bare.stdout) as { cpuMs: number }).cpuMs / widths.length);
    }
  }

  // What the edge sent is the animation: every frame, at its delays.
  const gif = await get(kinds.gif(400));
  const gifMeta = await sharp(gif.body, { animated: true }).metadata();
  const video = await get(kinds.mp4(400));
  const probe = spawnSync(
    'ffprobe',
    ['-v', 'error', '-count_frames', '-show_streams', '-of', 'json', '-i', 'pipe:0'],
    {
      input: video.body,
    },
  );
  const [stream] = (JSON.parse(probe.stdout.toString()) as { streams: Array<{ nb_read_frames: string }> })
    .streams;

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
      mp4Frames: Number(stream?.nb_read_frames),
      gifBytes: gif.body.length,
      mp4Bytes: video.body.length,
    },
    { gifCpuRatio: '<= 1.10', mp4CpuRatio: '<= 1.10', gifFrames: `= ${FRAMES}`, gifDelaysKept: '= 1' },
  );
} finally {
  await edge.stop();
  agent.destroy();
  origin.close();
}
