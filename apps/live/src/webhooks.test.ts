import { createServer, Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Webhooks } from './webhooks.ts';

const webhooks = (allowPrivate: boolean) =>
  new Webhooks(
    {
      agents: { http: new HttpAgent(), https: new HttpsAgent() },
      allowPrivate,
      timeoutMs: 1_000,
      attempts: 1,
      backoffMs: 0,
    },
    pino({ level: 'silent' }),
  );

describe('Webhooks', () => {
  it('never calls a private address written as such (no lookup for the agents to guard)', async () => {
    let calls = 0;
    const server = createServer((_req, res) => {
      calls++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"allowed": true}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/auth`;
    try {
      expect(await webhooks(false).allowed(url, {})).toBe(false);
      expect(calls).toBe(0);
      // Where private addresses are allowed (development), the same webhook answers.
      expect(await webhooks(true).allowed(url, {})).toBe(true);
      expect(calls).toBe(1);
    } finally {
      server.close();
    }
  });
});
