// Live ingest: WHIP publish of a 720p30 H.264 test stream into a two-rung ladder (720p30
// 2.5 Mbit/s, 360p30 800 kbit/s, 1 s segments). Targets (issue 7): first playable segment
// <= 4 s after the WHIP POST; glass-to-glass <= 3 s; CPU per stream reported.
//
// Glass-to-glass without OCR: the publisher overlays its own frame time as a 20-bit binary
// strip (black/white 32 px blocks, milliseconds) on top of the picture. The viewer side polls
// the 720p media playlist like a player at the live edge; when a segment appears it is
// downloaded, its first frame decoded and the strip read back. Latency is the moment the
// frame became viewable minus the moment it was generated (the publisher's first RTP packet
// is frame time 0). The publisher runs in a child process so the CPU figure is the server's.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Permission } from '@ukiyo/contract';
import { createLive } from '../apps/live/src/index.ts';
import { publish } from '../apps/live/test/publisher.ts';
import { encodeToken } from '../apps/server/src/auth/api-tokens.ts';
import { randomToken, tokenDigest } from '../apps/server/src/crypto/tokens.ts';
import { createOrganization, createSakuraAccount } from '../apps/server/src/db/repositories/organizations.ts';
import { createServerDeps, loadConfig } from '../apps/server/src/index.ts';
import { report } from './lib.ts';

const run = promisify(execFile);
const BITS = 20;
const STRIP = `color=c=black:s=${BITS * 32}x32:r=30,format=gray,geq=lum='255*mod(floor(floor(T*1000+0.5)/pow(2\\,floor(X/32)))\\,2)'`;
const SOURCE = `testsrc2=size=1280x720:rate=30[bg];${STRIP}[code];[bg][code]overlay=0:0[out0]`;

function startPublisher(whipUrl: string, token: string) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), '--publish', JSON.stringify({ whipUrl, token })],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const times = new Promise<{ postedAt: number; firstPacketAt: number }>((resolve, reject) => {
    child.stdout.setEncoding('utf8');
    child.stdout.once('data', (line: string) =>
      resolve(JSON.parse(line) as { postedAt: number; firstPacketAt: number }),
    );
    child.once('exit', (code) => reject(new Error(`publisher exited ${code}`)));
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  return { times, stop };
}

/** The frame time (ms) burned into the first frame of a segment. */
async function frameTime(segment: string): Promise<number> {
  const { stdout } = await run(
    'ffmpeg',
    [
      '-v',
      'error',
      '-i',
      segment,
      '-frames:v',
      '1',
      '-vf',
      `crop=${BITS * 32}:32:0:0,scale=${BITS}:1:flags=area`,
      '-f',
      'rawvideo',
      '-pix_fmt',
      'gray',
      '-',
    ],
    { encoding: 'buffer' },
  );
  let value = 0;
  for (let bit = 0; bit < BITS; bit++) if (stdout[bit]! > 128) value += 2 ** bit;
  return value;
}

/** CPU seconds (user + system) of a process from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function packagerPid(): Promise<number> {
  const { stdout } = await run('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)]);
  const line = stdout.split('\n').find((row) => row.includes('ffmpeg') && row.includes('pipe:0'));
  if (!line) throw new Error('no packaging ffmpeg');
  return Number(line.trim().split(/\s+/)[0]);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'ukiyo-bench-live-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    PUBLIC_API_RATE_PER_MINUTE: '1000000',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
  });
  const { deps, database } = await createServerDeps(config);
  const live = await createLive(deps, { dir: join(dataDir, 'live') });
  await new Promise<void>((resolve) => live.server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(live.server.address() as { port: number }).port}`;
  const accountId = await createSakuraAccount(deps.db, { memberCode: `BENCH${Date.now()}`, name: 'bench' });
  const organizationId = await createOrganization(deps.db, {
    accountId,
    name: 'live bench',
    serviceCode: `bench-${Date.now()}`,
    isLive: true,
  });
  const secret = randomToken();
  await deps.db
    .insertInto('auth_tokens')
    .values({
      organization_id: organizationId,
      token_hash: tokenDigest(secret),
      token_last4: secret.slice(-4),
      permission: Permission.channel,
    })
    .execute();
  const token = encodeToken(secret);
  const call = async (target: string, body: unknown) => {
    const response = await fetch(`${base}/`, {
      method: 'POST',
      headers: { 'X-Sora-Target': target, Authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    return (await response.json()) as Record<string, unknown>;
  };
  const ladder = {
    hls: [
      {
        durationSeconds: 1,
        video: { width: 1280, height: 720, fps: 30, bps: 2_500_000 },
        audio: { bps: 128000 },
      },
      {
        durationSeconds: 1,
        video: { width: 640, height: 360, fps: 30, bps: 800_000 },
        audio: { bps: 64000 },
      },
    ],
  };

  try {
    const firstSegment: number[] = [];
    const latencies: number[] = [];
    let cpuCores = 0;
    const runs = Number(process.env.BENCH_RUNS ?? 3);
    for (let round = 0; round < runs; round++) {
      const channelId = (await call('ImageFlux_20200316.CreateMultistreamChannelWithHLS', ladder))
        .channel_id as string;
      const spawned = Date.now();
      const publisher = startPublisher(`${base}/whip/${channelId}`, token);
      let master: string | undefined;
      while (!master) {
        const answer = await call('ImageFlux_20200207.ListPlaylistURLs', { channel_id: channelId });
        master = (answer.hls as { playlist_url: string }[] | undefined)?.[0]?.playlist_url;
        if (!master && Date.now() - spawned > 30_000) throw new Error('no playlist within 30 s');
        if (!master) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const playable = Date.now();
      const { postedAt, firstPacketAt: zero } = await publisher.times;
      firstSegment.push(playable - postedAt);

      if (round === runs - 1) {
        // Glass to glass over ~12 segments, polling the 720p playlist every 100 ms.
        const media = `${base}${new URL(master).pathname.replace(/master\.m3u8$/, '0/index.m3u8')}`;
        const seen = new Set<string>();
        const scratch = mkdtempSync(join(tmpdir(), 'ukiyo-bench-seg-'));
        const until = Date.now() + 12_000;
        let first = true;
        while (Date.now() < until) {
          const names = (await (await fetch(media)).text())
            .split('\n')
            .filter((line) => line.endsWith('.ts'));
          for (const name of names) {
            if (seen.has(name)) continue;
            seen.add(name);
            if (first) continue; // segments already there when we started are not "new"
            const data = Buffer.from(await (await fetch(media.replace(/index\.m3u8$/, name))).arrayBuffer());
            const viewable = Date.now();
            const file = join(scratch, name);
            await import('node:fs/promises').then((fs) => fs.writeFile(file, data));
            latencies.push(viewable - (zero + (await frameTime(file))));
          }
          first = false;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }

        // CPU of the packaging ffmpeg and of this (server) process over 20 s of steady state.
        const pid = await packagerPid();
        const ffmpegBefore = cpuSeconds(pid);
        const nodeBefore = process.cpuUsage();
        const wallBefore = Date.now();
        await new Promise((resolve) => setTimeout(resolve, 20_000));
        const wall = (Date.now() - wallBefore) / 1000;
        const node = process.cpuUsage(nodeBefore);
        cpuCores = (cpuSeconds(pid) - ffmpegBefore + (node.user + node.system) / 1e6) / wall;
      }
      await publisher.stop();
      await call('ImageFlux_20180501.DeleteChannel', { channel_id: channelId });
    }
    report(
      'live',
      {
        firstSegmentMs: median(firstSegment),
        glassToGlassMedianMs: median(latencies),
        glassToGlassMaxMs: Math.max(...latencies),
        cpuCoresPerStream: Math.round(cpuCores * 100) / 100,
      },
      { firstSegmentMs: '<= 4000', glassToGlassMedianMs: '<= 3000' },
    );
  } finally {
    await live.close();
    await database.close();
  }
}

if (process.argv[2] === '--publish') {
  // Child mode: publish until killed, telling the parent when frame time 0 went out.
  const { whipUrl, token } = JSON.parse(process.argv[3]!) as { whipUrl: string; token: string };
  const publisher = await publish({
    whipUrl,
    token,
    codec: 'h264',
    width: 1280,
    height: 720,
    fps: 30,
    bitrate: '4M',
    source: SOURCE,
  });
  if (publisher.status !== 201) throw new Error(`WHIP answered ${publisher.status}: ${publisher.error}`);
  const firstPacketAt = await publisher.firstPacketAt();
  process.stdout.write(`${JSON.stringify({ postedAt: publisher.postedAt, firstPacketAt })}\n`);
  process.on('SIGTERM', () => void publisher.stop().then(() => process.exit(0)));
} else {
  await main();
}
