import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.ts';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, log: createLogger({ LOG_LEVEL: 'info' }, 'test', stream) };
}

describe('createLogger', () => {
  it('redacts secrets at the top level, one level down and in headers', () => {
    const { lines, log } = capture();
    log.info(
      {
        password: 'hunter2-top',
        input: { newPassword: 'hunter2-nested', token: 'tok-123456', signingSecret: 'sign-abc' },
        config: { SECRET_KEY: 'key-material', DATABASE_URL: 'postgres://u:pw-in-url@db/x' },
        req: { headers: { authorization: 'Bearer bearer-xyz', cookie: 'ukiyo_session=cookie-abc' } },
        headers: { 'set-cookie': 'ukiyo_session=cookie-def' },
        kept: 'visible-value',
      },
      'something happened',
    );
    const written = lines.join('');
    for (const secret of [
      'hunter2-top',
      'hunter2-nested',
      'tok-123456',
      'sign-abc',
      'key-material',
      'pw-in-url',
      'bearer-xyz',
      'cookie-abc',
      'cookie-def',
    ])
      expect(written).not.toContain(secret);
    expect(written).toContain('visible-value');
    expect(written).toContain('[redacted]');
    expect(JSON.parse(lines[0]!)).toMatchObject({ app: 'test', msg: 'something happened' });
  });
});
