// The origin behind the fuzzed URLs (fuzz-urls.ts): the two images they name, on loopback.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';

/** Serves /photo.jpg (320x240) and /logo.png (60x30, translucent); 404 for anything else. */
export async function serveFuzzImages(): Promise<{ port: number; close(): Promise<void> }> {
  const photo = await sharp({ create: { width: 320, height: 240, channels: 3, background: '#8a6' } })
    .jpeg()
    .toBuffer();
  const logo = await sharp({ create: { width: 60, height: 30, channels: 4, background: '#f00a' } })
    .png()
    .toBuffer();
  const server = createServer((req, res) => {
    const file = { '/photo.jpg': photo, '/logo.png': logo }[req.url ?? ''];
    if (file) res.writeHead(200, { 'content-length': file.length }).end(file);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
