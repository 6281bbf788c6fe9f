// The miss peer of bench/edge.ts and bench/smart-crop.ts: sharp with nothing around it, as a
// server. GET /{width}/{format}/{file} fetches {ORIGIN}/{file} over a keep-alive connection and
// answers it resized to `width` in `format` with the edge's encoder settings;
// `?height=…&strategy=attention|entropy` crops to fill width x height, placed by that sharp
// strategy (the edge's a=2,g=…). Plain JavaScript, run by bare node: no TypeScript loader
// weighs on the figures it is compared by.
import { Agent, createServer, get } from 'node:http';
import sharp from 'sharp';

// As the edge runs it: every miss is a fresh buffer, which libvips' operation cache never reuses.
sharp.cache(false);
const origin = process.env.ORIGIN;
const agent = new Agent({ keepAlive: true });
const ENCODE = {
  webp: (image) => image.webp({ quality: 80 }),
  png: (image) => image.png(),
  avif: (image) => image.avif({ quality: 50, effort: 3 }),
  // q=75 (the edge's default), Huffman tables optimised, as the edge writes JPEG.
  jpeg: (image) => image.jpeg({ quality: 75, optimiseCoding: true, mozjpeg: false }),
};

function fetchOriginal(file) {
  return new Promise((resolve, reject) => {
    get(`${origin}/${file}`, { agent }, (response) => {
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () => resolve(Buffer.concat(chunks)));
      response.on('error', reject);
    }).on('error', reject);
  });
}

function resize(width, query) {
  const strategy = query.get('strategy');
  if (!strategy) return { width };
  const height = Number(query.get('height'));
  return { width, height, fit: 'cover', position: sharp.strategy[strategy] };
}

const server = createServer(async (req, res) => {
  const [path, query = ''] = req.url.split('?');
  const [, width, format, file] = path.split('/');
  try {
    const input = await fetchOriginal(file);
    const image = sharp(input).resize(resize(Number(width), new URLSearchParams(query)));
    const output = await ENCODE[format](image).toBuffer();
    res.writeHead(200, { 'Content-Type': `image/${format}`, 'Content-Length': output.length }).end(output);
  } catch (error) {
    res.writeHead(500).end(String(error));
  }
});
server.keepAliveTimeout = 120_000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('listening\n'));
// Exits rather than dies on the bench's SIGTERM, so that a --cpu-prof profile is written.
process.on('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
