import { createDecipheriv, pbkdf2 } from 'node:crypto';
import { isIPv4 } from 'node:net';
import { promisify } from 'node:util';

/**
 * SRT packets as the SRT front and relay need them (pure: unit-tested), per the SRT draft
 * (draft-sharabayko-srt) and Haivision's handshake and access-control documents: the 16-byte
 * header, the HSv5 handshake with its extensions (stream id, key material), rejections and
 * SHUTDOWN. All fields are big-endian 32-bit words, with two quirks of libsrt kept by every
 * implementation: the peer IP and the stream id are written as little-endian words.
 */

export const HEADER_BYTES = 16;
/** The handshake's fields after the header (version to peer IP). */
const HANDSHAKE_BYTES = 48;
const CONTROL_BIT = 0x8000_0000;
/** The first word of a control packet of a type (unsigned: JavaScript's `|` is signed). */
const controlWord = (type: number) => (CONTROL_BIT | (type << 16)) >>> 0;
const HANDSHAKE_WORD = controlWord(0x0000);
const SHUTDOWN_WORD = controlWord(0x0005);

/** Handshake types (the UDT "request type"); 1000 and above are rejections. */
export const INDUCTION = 1;
export const CONCLUSION = 0xffff_ffff;
const REJECTION_BASE = 1000;

/** The version an HSv5 listener answers an induction with, and its magic extension field. */
export const HSV5 = 5;
const UDT_DGRAM = 2;
const SRT_MAGIC = 0x4a17;
/** Conclusion extension flags: HSREQ always for HSv5 callers. */
export const HS_EXT_HSREQ = 0x1;

/** Handshake extension blocks. */
const EXT_KMREQ = 3;
const EXT_SID = 5;
/** libsrt's longest stream id. */
const MAX_STREAM_ID = 512;

/**
 * Rejection reasons (the handshake type carries 1000 + reason): libsrt's own (below 1000) and
 * the access-control ones, which are HTTP statuses plus 1000.
 */
export const Reject = {
  close: 7,
  version: 8,
  badSecret: 10,
  unsecure: 11,
  badRequest: 1400,
  overload: 1402,
  forbidden: 1403,
  notFound: 1404,
  badMode: 1405,
  conflict: 1409,
  internal: 1500,
} as const;

/** The access-control reason for an HTTP-style refusal status (PublishError). */
export function rejectReasonOf(status: number): number {
  return status >= 400 && status < 600 ? 1000 + status : Reject.internal;
}

export interface Handshake {
  /** Header: the packet's timestamp and destination socket id (0 for a connection request). */
  timestamp: number;
  destination: number;
  version: number;
  /** HSv5: advertised key length (upper 16 bits) and extension flags or magic (lower 16). */
  encryption: number;
  extension: number;
  isn: number;
  mss: number;
  flowWindow: number;
  type: number;
  socketId: number;
  cookie: number;
  /** 16 bytes as on the wire. */
  peerIp: Buffer;
  /** The extension blocks after the handshake, as on the wire. */
  extensions: Buffer;
}

/** The handshake in a datagram, or undefined when it is anything else. */
export function parseHandshake(packet: Buffer): Handshake | undefined {
  if (packet.length < HEADER_BYTES + HANDSHAKE_BYTES) return undefined;
  if (packet.readUInt32BE(0) !== HANDSHAKE_WORD) return undefined;
  const at = HEADER_BYTES;
  return {
    timestamp: packet.readUInt32BE(8),
    destination: packet.readUInt32BE(12),
    version: packet.readUInt32BE(at),
    encryption: packet.readUInt16BE(at + 4),
    extension: packet.readUInt16BE(at + 6),
    isn: packet.readUInt32BE(at + 8),
    mss: packet.readUInt32BE(at + 12),
    flowWindow: packet.readUInt32BE(at + 16),
    type: packet.readUInt32BE(at + 20),
    socketId: packet.readUInt32BE(at + 24),
    cookie: packet.readUInt32BE(at + 28),
    peerIp: Buffer.from(packet.subarray(at + 32, at + 48)),
    extensions: Buffer.from(packet.subarray(at + HANDSHAKE_BYTES)),
  };
}

export function encodeHandshake(handshake: Handshake): Buffer {
  const packet = Buffer.alloc(HEADER_BYTES + HANDSHAKE_BYTES + handshake.extensions.length);
  packet.writeUInt32BE(HANDSHAKE_WORD, 0);
  packet.writeUInt32BE(handshake.timestamp >>> 0, 8);
  packet.writeUInt32BE(handshake.destination >>> 0, 12);
  const at = HEADER_BYTES;
  packet.writeUInt32BE(handshake.version, at);
  packet.writeUInt16BE(handshake.encryption, at + 4);
  packet.writeUInt16BE(handshake.extension, at + 6);
  packet.writeUInt32BE(handshake.isn >>> 0, at + 8);
  packet.writeUInt32BE(handshake.mss >>> 0, at + 12);
  packet.writeUInt32BE(handshake.flowWindow >>> 0, at + 16);
  packet.writeUInt32BE(handshake.type >>> 0, at + 20);
  packet.writeUInt32BE(handshake.socketId >>> 0, at + 24);
  packet.writeUInt32BE(handshake.cookie >>> 0, at + 28);
  handshake.peerIp.copy(packet, at + 32, 0, 16);
  handshake.extensions.copy(packet, at + HANDSHAKE_BYTES);
  return packet;
}

/** An HSv5 listener's answer to an induction: the caller's fields with version 5, magic, cookie. */
export function inductionResponse(request: Handshake, cookie: number, timestamp: number): Buffer {
  return encodeHandshake({
    ...request,
    timestamp,
    destination: request.socketId,
    version: HSV5,
    // No key length advertised: the caller's own (its pbkeylen, 16 by default) is used.
    encryption: 0,
    extension: SRT_MAGIC,
    cookie,
    extensions: Buffer.alloc(0),
  });
}

/** The induction a caller would send, built from its conclusion (same ISN, MSS, window, id). */
export function inductionRequest(conclusion: Handshake, peerIp: Buffer): Buffer {
  return encodeHandshake({
    ...conclusion,
    destination: 0,
    version: 4,
    encryption: 0,
    extension: UDT_DGRAM,
    type: INDUCTION,
    cookie: 0,
    peerIp,
    extensions: Buffer.alloc(0),
  });
}

/** A rejection of a caller's handshake: its own fields with the reason as the type. */
export function rejection(request: Handshake, reason: number, timestamp: number): Buffer {
  return encodeHandshake({
    ...request,
    timestamp,
    destination: request.socketId,
    type: REJECTION_BASE + reason,
    extensions: Buffer.alloc(0),
  });
}

/** The reason of a rejection handshake, else undefined. */
export function rejectionReason(handshake: Handshake): number | undefined {
  // Conclusion, agreement and done are negative as libsrt's signed int32: above 2^31 here.
  const { type } = handshake;
  return type >= REJECTION_BASE && type < 0x8000_0000 ? type - REJECTION_BASE : undefined;
}

/** SHUTDOWN to one socket: the peer closes its connection at once. */
export function shutdown(destination: number, timestamp: number): Buffer {
  // The control information field is empty, but libsrt always sends (and expects) one word.
  const packet = Buffer.alloc(HEADER_BYTES + 4);
  packet.writeUInt32BE(SHUTDOWN_WORD, 0);
  packet.writeUInt32BE(timestamp >>> 0, 8);
  packet.writeUInt32BE(destination >>> 0, 12);
  return packet;
}

export function isShutdown(packet: Buffer): boolean {
  return packet.length >= HEADER_BYTES && packet.readUInt32BE(0) === SHUTDOWN_WORD;
}

export function isData(packet: Buffer): boolean {
  return packet.length > HEADER_BYTES && (packet.readUInt32BE(0) & CONTROL_BIT) === 0;
}

/** The destination socket id of any packet. */
export function destinationOf(packet: Buffer): number {
  return packet.readUInt32BE(12);
}

/**
 * The peer IP field for an address (the receiver's, as the sender sees it): libsrt copies
 * `in_addr` and `in6_addr` into host-order words, so each 4-byte group goes out reversed.
 */
export function peerIpField(address: string): Buffer {
  const field = Buffer.alloc(16);
  const v4 = isIPv4(address) ? address : /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (v4) {
    Buffer.from(v4.split('.').map(Number)).reverse().copy(field, 0);
    return field;
  }
  const [head = '', tail] = (address.split('%')[0] ?? '').split('::');
  const groups = (text: string | undefined) =>
    text ? text.split(':').map((group) => parseInt(group, 16)) : [];
  const front = groups(head);
  const back = groups(tail);
  const all = [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  const bytes = Buffer.alloc(16);
  all.forEach((group, i) => bytes.writeUInt16BE(group, i * 2));
  for (let word = 0; word < 4; word++)
    bytes
      .subarray(word * 4, word * 4 + 4)
      .reverse()
      .copy(field, word * 4);
  return field;
}

/** The extension blocks of a conclusion: type and body (the length counts 4-byte words). */
function extensionBlocks(extensions: Buffer): { type: number; body: Buffer }[] {
  const blocks: { type: number; body: Buffer }[] = [];
  let at = 0;
  while (at + 4 <= extensions.length) {
    const type = extensions.readUInt16BE(at);
    const end = at + 4 + extensions.readUInt16BE(at + 2) * 4;
    if (end > extensions.length) break;
    blocks.push({ type, body: extensions.subarray(at + 4, end) });
    at = end;
  }
  return blocks;
}

/** The stream id of a conclusion (UTF-8 in little-endian words, zero-padded), if any. */
export function streamIdOf(handshake: Handshake): string | undefined {
  const block = extensionBlocks(handshake.extensions).find((candidate) => candidate.type === EXT_SID);
  if (!block || block.body.length === 0 || block.body.length > MAX_STREAM_ID) return undefined;
  const text = Buffer.from(block.body);
  for (let at = 0; at + 4 <= text.length; at += 4) text.subarray(at, at + 4).reverse();
  return text.toString('utf8').replace(/\0+$/, '');
}

const CHANNEL_ID = /^[0-9a-f]{1,64}$/;

/**
 * The channel a stream id names: the channel id itself, or the access-control form
 * `#!::r={channel},m=publish` (m may be left out; any other mode is refused).
 */
export function channelOfStreamId(streamId: string): { channelId: string } | { reject: number } {
  let resource = streamId;
  if (streamId.startsWith('#!::')) {
    const pairs = new Map(
      streamId
        .slice(4)
        .split(',')
        .map((pair) => {
          const at = pair.indexOf('=');
          return [pair.slice(0, at), pair.slice(at + 1)] as const;
        }),
    );
    const mode = pairs.get('m');
    if (mode !== undefined && mode !== 'publish') return { reject: Reject.badMode };
    resource = pairs.get('r') ?? '';
  }
  return CHANNEL_ID.test(resource) ? { channelId: resource } : { reject: Reject.badRequest };
}

/** What a caller's key material says about a passphrase. */
export type KeyMaterialCheck = 'matches' | 'absent' | 'wrong';

const KM_HEADER_BYTES = 16;
const KM_SIGN = 0x2029; // 'HAI' in 5-bit letters
const KM_CIPHER_AES_CTR = 2;
const KM_SE_SRT = 2;
const WRAP_ICV_BYTES = 8;
const PBKDF2_SALT_BYTES = 8;
const PBKDF2_ITERATIONS = 2048;
const KEY_WRAP_IV = Buffer.from('a6a6a6a6a6a6a6a6', 'hex');
const derive = promisify(pbkdf2);

/**
 * Checks the caller's key material (the conclusion's KMREQ) against a passphrase as the SRT
 * receiver would: KEK = PBKDF2-HMAC-SHA1(passphrase, last 8 bytes of the salt, 2048, key
 * length), then the wrapped stream key(s) are unwrapped (RFC 3394), whose integrity check fails
 * for any other passphrase. Anything malformed is 'wrong': an SRT receiver refuses it too.
 */
export async function checkKeyMaterial(handshake: Handshake, passphrase: string): Promise<KeyMaterialCheck> {
  const km = extensionBlocks(handshake.extensions).find((block) => block.type === EXT_KMREQ)?.body;
  if (!km) return 'absent';
  if (km.length < KM_HEADER_BYTES) return 'wrong';
  const saltBytes = km[14]! * 4;
  const keyBytes = km[15]! * 4;
  const keys = (km[3]! & 0x3) === 0x3 ? 2 : 1;
  if (
    km[0] !== 0x12 || // version 1, packet type 2 (key material)
    km.readUInt16BE(1) !== KM_SIGN ||
    (km[3]! & 0x3) === 0 ||
    km[8] !== KM_CIPHER_AES_CTR ||
    km[10] !== KM_SE_SRT ||
    saltBytes < PBKDF2_SALT_BYTES ||
    ![16, 24, 32].includes(keyBytes) ||
    km.length !== KM_HEADER_BYTES + saltBytes + keys * keyBytes + WRAP_ICV_BYTES
  ) {
    return 'wrong';
  }
  const salt = km.subarray(KM_HEADER_BYTES, KM_HEADER_BYTES + saltBytes);
  const kek = await derive(
    passphrase,
    salt.subarray(saltBytes - PBKDF2_SALT_BYTES),
    PBKDF2_ITERATIONS,
    keyBytes,
    'sha1',
  );
  try {
    const unwrap = createDecipheriv(`id-aes${keyBytes * 8}-wrap`, kek, KEY_WRAP_IV);
    unwrap.update(km.subarray(KM_HEADER_BYTES + saltBytes));
    unwrap.final();
    return 'matches';
  } catch {
    return 'wrong';
  }
}
