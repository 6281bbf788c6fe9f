import { MessageChannel, type Worker } from 'node:worker_threads';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  MediaStreamTrack,
  RTCPeerConnection,
  RTCRtpCodecParameters,
  RtpHeader,
  RtpPacket,
  useH264,
} from 'werift';
import { Broadcast, ViewerThread, ViewerThreads } from './threads.ts';

const H264 = new RTCRtpCodecParameters({
  mimeType: 'video/H264',
  clockRate: 90_000,
  payloadType: 96,
  parameters: 'level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f',
});

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A werift viewer of `threads`' broadcast, connected; counts the RTP packets it receives. */
async function connectViewer(threads: ViewerThreads, broadcast: Broadcast) {
  const room = threads.admit()!;
  const viewer = room.thread.open(broadcast);
  void viewer.ended.then(room.left);
  const pc = new RTCPeerConnection({
    codecs: { video: [useH264()] },
    iceAdditionalHostAddresses: ['127.0.0.1'],
  });
  cleanups.push(() => pc.close());
  let received = 0;
  pc.onTrack.subscribe((track) => track.onReceiveRtp.subscribe(() => void received++));
  pc.addTransceiver('video', { direction: 'recvonly' });
  await pc.setLocalDescription(await pc.createOffer());
  await pc.setRemoteDescription({ type: 'answer', sdp: await viewer.answer(pc.localDescription!.sdp) });
  await pc.connectionStateChange.watch((state) => state === 'connected', 10_000);
  return { viewer, thread: room.thread, received: () => received };
}

describe('ViewerThreads', () => {
  it('forwards to a viewer on a worker thread; a thread that dies ends its viewers and is replaced', async () => {
    const workers: Worker[] = [];
    const threads = new ViewerThreads(
      {
        threads: 1,
        maxLoad: 1,
        loadWindowMs: 60_000,
        settings: { ice: { additionalHostAddresses: [] }, iceGatheringTimeoutMs: 2_000 },
      },
      pino({ level: 'silent' }),
      () => {},
      (worker) => workers.push(worker),
    );
    cleanups.push(() => threads.close());
    const track = new MediaStreamTrack({ kind: 'video', codec: H264 });
    const broadcast = new Broadcast(
      { video: { track, codec: H264 }, audio: undefined, requestKeyframe: () => {} },
      'stream',
      threads,
    );
    cleanups.push(async () => broadcast.close());
    // Every packet a keyframe's first (an SPS): a viewer starts at once.
    let sequenceNumber = 0;
    const publishing = setInterval(() => {
      sequenceNumber++;
      const header = new RtpHeader({
        payloadType: 96,
        sequenceNumber,
        timestamp: sequenceNumber * 3000,
        ssrc: 7,
      });
      track.writeRtp(new RtpPacket(header, Buffer.from([0x67, 0x42, 0xe0, 0x1f])));
    }, 20);
    cleanups.push(async () => clearInterval(publishing));

    const first = await connectViewer(threads, broadcast);
    await expect.poll(first.received, { timeout: 5_000 }).toBeGreaterThan(5);

    await workers[0]!.terminate();
    await expect(first.viewer.ended).resolves.toBe('closed');

    const second = await connectViewer(threads, broadcast);
    expect(workers).toHaveLength(2);
    expect(second.thread).not.toBe(first.thread);
    await expect.poll(second.received, { timeout: 5_000 }).toBeGreaterThan(5);
  });
});

describe('ViewerThread', () => {
  it('sends a thread that stops taking packets no more than its backlog allows', async () => {
    const options = {
      threads: 1,
      maxLoad: 1,
      loadWindowMs: 60_000,
      settings: { ice: { additionalHostAddresses: [] }, iceGatheringTimeoutMs: 2_000 },
    };
    const { port1, port2 } = new MessageChannel();
    const thread = new ViewerThread(
      port1,
      performance.eventLoopUtilization,
      options,
      new ViewerThreads(options, pino({ level: 'silent' }), () => {}),
    );
    cleanups.push(async () => {
      thread.fail(new Error('done'));
      port1.close();
    });
    const packet = Buffer.alloc(1_200);
    for (let sent = 0; sent < 3_000; sent++) thread.postPacket('b', 'video', packet);
    let received = 0;
    port2.on('message', () => void received++);
    await expect.poll(() => received).toBe(2_048);
    // The thread took 64: that many more go.
    port2.postMessage({ type: 'taken' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (let sent = 0; sent < 100; sent++) thread.postPacket('b', 'video', packet);
    await expect.poll(() => received).toBe(2_048 + 64);
  });
});
