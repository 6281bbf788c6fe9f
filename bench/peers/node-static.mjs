// The floor of a cache hit in Node (bench/edge.ts): a bare node:http server answering one file
// from memory, nothing else. Plain JavaScript, run by bare node.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const body = readFileSync(process.env.FILE);
const server = createServer((_req, res) => {
  res.writeHead(200, { 'Content-Type': 'image/webp', 'Content-Length': body.length }).end(body);
});
server.keepAliveTimeout = 120_000;
server.listen(Number(process.env.PORT), '127.0.0.1');
