// The floor of a cache hit in Node (bench/edge.ts): a bare node:http server answering one file
// from memory, nothing else, on PORT; and a bare node:https one on PORT + 1 with CERT and KEY
// (files). Plain JavaScript, run by bare node.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';

const body = readFileSync(process.env.FILE);
const answer = (_req, res) =>
  res.writeHead(200, { 'Content-Type': 'image/webp', 'Content-Length': body.length }).end(body);
const port = Number(process.env.PORT);
const servers = [createServer(answer).listen(port, '127.0.0.1')];
if (process.env.CERT) {
  const tls = { cert: readFileSync(process.env.CERT), key: readFileSync(process.env.KEY) };
  servers.push(createTlsServer(tls, answer).listen(port + 1, '127.0.0.1'));
}
for (const server of servers) server.keepAliveTimeout = 120_000;
