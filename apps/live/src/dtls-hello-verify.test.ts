// werift's DTLS client as the live server runs it (the answerer of a WHIP offer is the DTLS
// client), with the fix in patches/werift+0.24.4.patch: a ClientHello resent before the peer's
// DTLS server started reaches that server twice, which answers each with a HelloVerifyRequest.
// werift 0.24 threw on the second one and the connection failed (under load, most of 100 viewers,
// when WHEP viewers were werift's too).
import {
  CipherContext,
  DtlsClient,
  DtlsServer,
  HashAlgorithm,
  NamedCurveAlgorithm,
  SignatureAlgorithm,
} from 'werift';
import type { DtlsSocket } from 'werift';
import { describe, expect, it } from 'vitest';

type Transport = ConstructorParameters<typeof DtlsClient>[0]['transport'];

/** One end of an in-memory datagram link; `deliver` hands the other end what this one sends. */
function end(deliver: (data: Buffer) => void): Transport {
  return {
    type: 'memory',
    address: { address: '127.0.0.1', family: 'IPv4', port: 0 },
    closed: false,
    onData: () => {},
    send: async (data: Buffer) => {
      deliver(Buffer.from(data));
    },
    close: async () => {},
  };
}

const connected = (socket: DtlsSocket) =>
  new Promise<void>((resolve, reject) => {
    socket.onConnect.subscribe(() => resolve());
    socket.onError.subscribe(reject);
  });

describe('werift DTLS client', () => {
  it('connects when the server answers its ClientHello twice with a HelloVerifyRequest', async () => {
    const { certPem, keyPem, signatureHash } = await CipherContext.createSelfSignedCertificateWithKey(
      { signature: SignatureAlgorithm.ecdsa_3, hash: HashAlgorithm.sha256_4 },
      NamedCurveAlgorithm.secp256r1_23,
    );
    const credentials = { cert: certPem, key: keyPem, signatureHash, extendedMasterSecret: true };
    const serverTransport = end((data) => setImmediate(() => clientTransport.onData(data, ['127.0.0.1', 2])));
    let sent = 0;
    const clientTransport = end((data) => {
      // The first flight, sent again as a retransmission would be: both reach the server.
      const copies = sent++ === 0 ? 2 : 1;
      for (let i = 0; i < copies; i++) setImmediate(() => serverTransport.onData(data, ['127.0.0.1', 1]));
    });
    const server = new DtlsServer({ ...credentials, transport: serverTransport, certificateRequest: true });
    const client = new DtlsClient({ ...credentials, transport: clientTransport });
    const both = Promise.all([connected(server), connected(client)]);
    await client.connect();
    await expect(both).resolves.toBeDefined();
    client.close();
    server.close();
  });
});
