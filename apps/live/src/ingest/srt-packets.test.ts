import { createCipheriv, pbkdf2Sync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  channelOfStreamId,
  checkKeyMaterial,
  CONCLUSION,
  encodeHandshake,
  INDUCTION,
  inductionRequest,
  inductionResponse,
  isData,
  isShutdown,
  parseHandshake,
  peerIpField,
  Reject,
  rejection,
  rejectionReason,
  rejectReasonOf,
  shutdown,
  streamIdOf,
} from './srt-packets.ts';

/**
 * Packets as an SRT caller (libsrt 1.5) sends them, written word by word from the layout of
 * draft-sharabayko-srt section 3.2.1 rather than with the module's own encoder.
 */
function handshakePacket(fields: {
  version: number;
  encryption?: number;
  extension: number;
  type: number;
  cookie: number;
  extensions?: Buffer;
}): Buffer {
  const words = [
    0x8000_0000, // F=1, control type 0 (handshake), subtype 0
    0, // type-specific information
    1234, // timestamp
    0, // destination socket id: a connection request
    fields.version,
    ((fields.encryption ?? 0) << 16) | fields.extension,
    0x1234_5678, // initial sequence number
    1500, // MTU
    8192, // flow window
    fields.type,
    0x0abc_def0, // the caller's socket id
    fields.cookie,
  ];
  const head = Buffer.alloc(words.length * 4 + 16);
  words.forEach((word, i) => head.writeUInt32BE(word >>> 0, i * 4));
  // Peer IP 127.0.0.1 as libsrt writes it: in_addr copied into a host-order (little-endian) word.
  head.set([1, 0, 0, 127], words.length * 4);
  return Buffer.concat([head, fields.extensions ?? Buffer.alloc(0)]);
}

/** An extension block: type, length in 4-byte words, body. */
function block(type: number, body: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(type, 0);
  head.writeUInt16BE(body.length / 4, 2);
  return Buffer.concat([head, body]);
}

/** SRT_CMD_SID: the string zero-padded to whole words, each word little-endian. */
function streamIdBlock(text: string): Buffer {
  const body = Buffer.alloc(Math.ceil(Buffer.byteLength(text) / 4) * 4);
  body.write(text);
  for (let at = 0; at < body.length; at += 4) body.subarray(at, at + 4).reverse();
  return block(5, body);
}

/**
 * SRT_CMD_KMREQ: the key material message (section 3.2.2) with `keys` stream keys of
 * `keyBytes`, wrapped (RFC 3394) under PBKDF2-HMAC-SHA1(passphrase, salt's last 8 bytes, 2048).
 */
function keyMaterialBlock(passphrase: string, keyBytes: number, keys: 1 | 2 = 1): Buffer {
  const salt = randomBytes(16);
  const kek = pbkdf2Sync(passphrase, salt.subarray(8), 2048, keyBytes, 'sha1');
  const wrap = createCipheriv(`id-aes${keyBytes * 8}-wrap`, kek, Buffer.from('a6a6a6a6a6a6a6a6', 'hex'));
  const wrapped = Buffer.concat([wrap.update(randomBytes(keyBytes * keys)), wrap.final()]);
  const header = Buffer.from([
    0x12, // S=0, version 1, packet type 2 (KM)
    0x20,
    0x29, // sign 'HAI'
    keys === 2 ? 0x03 : 0x01, // KK: even key (and odd)
    0,
    0,
    0,
    0, // KEKI
    2, // cipher AES-CTR
    0, // auth none
    2, // SE: SRT
    0,
    0,
    0,
    16 / 4, // salt length in words
    keyBytes / 4, // key length in words
  ]);
  return block(3, Buffer.concat([header, salt, wrapped]));
}

const HSREQ = block(1, Buffer.from('00010501000000bf00780000', 'hex'));

describe('SRT packets', () => {
  it("reads a caller's induction and answers it as an HSv5 listener", () => {
    const induction = parseHandshake(handshakePacket({ version: 4, extension: 2, type: 1, cookie: 0 }))!;
    expect(induction).toMatchObject({
      destination: 0,
      version: 4,
      extension: 2,
      isn: 0x1234_5678,
      mss: 1500,
      type: INDUCTION,
      socketId: 0x0abc_def0,
      cookie: 0,
    });
    const answer = inductionResponse(induction, 0xfeed_beef, 99);
    expect(answer.length).toBe(64);
    expect(answer.readUInt32BE(0)).toBe(0x8000_0000);
    expect(answer.readUInt32BE(8)).toBe(99);
    expect(answer.readUInt32BE(12)).toBe(0x0abc_def0); // to the caller's socket
    expect(answer.readUInt32BE(16)).toBe(5);
    expect(answer.readUInt32BE(20)).toBe(0x4a17); // no key length advertised, SRT magic
    expect(answer.readUInt32BE(24)).toBe(0x1234_5678);
    expect(answer.readUInt32BE(36)).toBe(1);
    expect(answer.readUInt32BE(44)).toBe(0xfeed_beef);

    expect(parseHandshake(Buffer.alloc(63))).toBeUndefined();
    expect(parseHandshake(shutdown(1, 0))).toBeUndefined();
  });

  it('reads the stream id of a conclusion and rebuilds the induction that preceded it', () => {
    const packet = handshakePacket({
      version: 5,
      extension: 0x5, // HSREQ | CONFIG
      type: 0xffff_ffff,
      cookie: 0x1111_2222,
      extensions: Buffer.concat([HSREQ, streamIdBlock('#!::r=0123abcd,m=publish')]),
    });
    const conclusion = parseHandshake(packet)!;
    expect(conclusion.type).toBe(CONCLUSION);
    expect(streamIdOf(conclusion)).toBe('#!::r=0123abcd,m=publish');
    expect(encodeHandshake(conclusion)).toEqual(packet);
    expect(
      streamIdOf(parseHandshake(handshakePacket({ version: 5, extension: 1, type: -1, cookie: 1 }))!),
    ).toBe(undefined);

    const again = parseHandshake(inductionRequest(conclusion, peerIpField('127.0.0.1')))!;
    expect(again).toMatchObject({
      version: 4,
      extension: 2,
      type: INDUCTION,
      cookie: 0,
      socketId: 0x0abc_def0,
    });
    expect(again.isn).toBe(conclusion.isn);
    expect(again.extensions.length).toBe(0);
  });

  it('names a channel by its id or the access-control form, publishing only', () => {
    expect(channelOfStreamId('0123abcd')).toEqual({ channelId: '0123abcd' });
    expect(channelOfStreamId('#!::r=0123abcd,m=publish')).toEqual({ channelId: '0123abcd' });
    expect(channelOfStreamId('#!::m=publish,u=someone,r=0123abcd')).toEqual({ channelId: '0123abcd' });
    expect(channelOfStreamId('#!::r=0123abcd')).toEqual({ channelId: '0123abcd' });
    expect(channelOfStreamId('#!::r=0123abcd,m=request')).toEqual({ reject: Reject.badMode });
    expect(channelOfStreamId('#!::m=publish')).toEqual({ reject: Reject.badRequest });
    expect(channelOfStreamId('live/0123abcd')).toEqual({ reject: Reject.badRequest });
    expect(channelOfStreamId('')).toEqual({ reject: Reject.badRequest });
  });

  it('checks the key material against the passphrase, every key length', async () => {
    const conclusion = (extensions: Buffer) =>
      parseHandshake(handshakePacket({ version: 5, extension: 3, type: -1, cookie: 1, extensions }))!;
    for (const keyBytes of [16, 24, 32]) {
      const km = Buffer.concat([HSREQ, keyMaterialBlock('the right passphrase', keyBytes)]);
      expect(await checkKeyMaterial(conclusion(km), 'the right passphrase')).toBe('matches');
      expect(await checkKeyMaterial(conclusion(km), 'the wrong passphrase')).toBe('wrong');
    }
    const both = Buffer.concat([HSREQ, keyMaterialBlock('the right passphrase', 16, 2)]);
    expect(await checkKeyMaterial(conclusion(both), 'the right passphrase')).toBe('matches');
    expect(await checkKeyMaterial(conclusion(HSREQ), 'the right passphrase')).toBe('absent');
    const truncated = keyMaterialBlock('the right passphrase', 16).subarray(0, 24);
    truncated.writeUInt16BE(5, 2);
    expect(
      await checkKeyMaterial(conclusion(Buffer.concat([HSREQ, truncated])), 'the right passphrase'),
    ).toBe('wrong');
  });

  it('refuses with a reason and shuts a connection down', () => {
    const conclusion = parseHandshake(
      handshakePacket({ version: 5, extension: 1, type: -1, cookie: 1, extensions: HSREQ }),
    )!;
    const refused = parseHandshake(rejection(conclusion, Reject.badSecret, 7))!;
    expect(refused).toMatchObject({ type: 1010, destination: 0x0abc_def0, extensions: Buffer.alloc(0) });
    expect(rejectionReason(refused)).toBe(Reject.badSecret);
    expect(rejectionReason(conclusion)).toBeUndefined();
    expect(rejectReasonOf(409)).toBe(Reject.conflict);
    expect(rejectReasonOf(403)).toBe(Reject.forbidden);
    expect(rejectReasonOf(0)).toBe(Reject.internal);

    const bye = shutdown(0x0abc_def0, 5);
    expect(bye.toString('hex')).toBe(['80050000', '00000000', '00000005', '0abcdef0', '00000000'].join(''));
    expect(isShutdown(bye)).toBe(true);
    expect(isData(bye)).toBe(false);
    const data = Buffer.alloc(16 + 188);
    data.writeUInt32BE(42, 0);
    expect(isData(data)).toBe(true);
  });

  it('writes the peer IP as libsrt does', () => {
    expect(peerIpField('192.0.2.7').toString('hex')).toBe('070200c0' + '0'.repeat(24));
    expect(peerIpField('::ffff:192.0.2.7').toString('hex')).toBe('070200c0' + '0'.repeat(24));
    // 2001:db8::1: bytes 20 01 0d b8 0..0 00 01, each word reversed.
    expect(peerIpField('2001:db8::1').toString('hex')).toBe('b80d0120' + '0'.repeat(16) + '01000000');
  });
});
