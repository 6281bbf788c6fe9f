import { RTCRtpCodecParameters } from 'werift';
import { describe, expect, it } from 'vitest';
import { PublishError } from '../ingest/ingest.ts';
import { offerFor, withHostAddresses } from './viewer.ts';

/** The video section of a browser's offer: VP8, H.264 in both packetization modes, RTX for each. */
const OFFER = [
  'v=0',
  'o=- 1 2 IN IP4 127.0.0.1',
  's=-',
  't=0 0',
  'a=group:BUNDLE 0',
  'm=video 9 UDP/TLS/RTP/SAVPF 96 97 102 103 106 107',
  'a=mid:0',
  'a=rtpmap:96 VP8/90000',
  'a=rtcp-fb:96 nack',
  'a=rtpmap:97 rtx/90000',
  'a=fmtp:97 apt=96',
  'a=rtpmap:102 H264/90000',
  'a=fmtp:102 level-asymmetry-allowed=1;packetization-mode=0;profile-level-id=42e01f',
  'a=rtpmap:103 rtx/90000',
  'a=fmtp:103 apt=102',
  'a=rtpmap:106 H264/90000',
  'a=rtcp-fb:106 nack pli',
  'a=fmtp:106 level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f',
  'a=rtpmap:107 rtx/90000',
  'a=fmtp:107 apt=106',
  '',
].join('\r\n');

const h264 = new RTCRtpCodecParameters({
  mimeType: 'video/H264',
  clockRate: 90000,
  parameters: 'profile-level-id=42e01f;packetization-mode=1;level-asymmetry-allowed=1',
});

describe('offerFor', () => {
  it("keeps the publisher's codec in packetization mode 1 and its RTX only", () => {
    const cut = offerFor(OFFER, 'video', h264);
    expect(cut).toMatch(/^m=video 9 UDP\/TLS\/RTP\/SAVPF 106 107\r$/m);
    expect(cut).toContain('a=rtcp-fb:106 nack pli');
    expect(cut).toContain('a=fmtp:107 apt=106');
    expect(cut).not.toMatch(/a=(rtpmap|fmtp|rtcp-fb):(96|97|102|103) /);
    expect(cut).toContain('a=mid:0');
  });

  it("keeps the lower rungs' own codec after the publisher's, each with its RTX, when offered", () => {
    const vp8 = new RTCRtpCodecParameters({ mimeType: 'video/VP8', clockRate: 90000 });
    const cut = offerFor(OFFER, 'video', vp8, h264);
    expect(cut).toMatch(/^m=video 9 UDP\/TLS\/RTP\/SAVPF 96 97 106 107\r$/m);
    expect(cut).not.toMatch(/a=(rtpmap|fmtp|rtcp-fb):(102|103) /);
    // Not offered: the publisher's codec alone.
    const vp9 = new RTCRtpCodecParameters({ mimeType: 'video/VP9', clockRate: 90000 });
    expect(offerFor(OFFER, 'video', vp8, vp9)).toMatch(/^m=video 9 UDP\/TLS\/RTP\/SAVPF 96 97\r$/m);
  });

  it('refuses an offer that cannot receive the codec', () => {
    const vp9 = new RTCRtpCodecParameters({ mimeType: 'video/VP9', clockRate: 90000 });
    expect(() => offerFor(OFFER, 'video', vp9)).toThrow(PublishError);
  });
});

describe('withHostAddresses', () => {
  it('announces each address beside every IPv4 host candidate, on its port, once', () => {
    const sdp = [
      'm=video 40000 UDP/TLS/RTP/SAVPF 96',
      'a=candidate:2 1 UDP 2116026111 fd00::2 40000 typ host',
      'a=candidate:1 1 UDP 2114977791 192.0.2.2 40000 typ host',
      'a=end-of-candidates',
      '',
    ].join('\r\n');
    const lines = withHostAddresses(sdp, ['127.0.0.1', '203.0.113.7', '192.0.2.2']).split('\r\n');
    expect(lines.filter((line) => line.startsWith('a=candidate'))).toEqual([
      'a=candidate:2 1 UDP 2116026111 fd00::2 40000 typ host',
      'a=candidate:1 1 UDP 2114977791 192.0.2.2 40000 typ host',
      'a=candidate:100 1 UDP 2114977790 127.0.0.1 40000 typ host',
      'a=candidate:101 1 UDP 2114977790 203.0.113.7 40000 typ host',
    ]);
    expect(lines.at(-2)).toBe('a=end-of-candidates');
  });
});
