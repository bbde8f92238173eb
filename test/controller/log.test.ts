import { PassThrough, Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, formatLogLine } from '../../controller/log.ts';
import { makeAuthApp } from '../api/auth/fixture.ts';
import type { TestApp } from '../helpers/runtime.ts';

const ANSI_NAME = '\u001b[2J\u001b[31mroot\u001b[0m\rforged INFO  login userId=U1\u009b1m';

function capture(): { out: PassThrough; text: () => string } {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString('utf8')));
  return { out, text: () => text };
}

describe('log lines', () => {
  it('escape control characters (C0, DEL, C1, line separators) in values, keys and messages', () => {
    const line = formatLogLine(JSON.stringify({ level: 30, time: 0, msg: 'a\u001bb', username: ANSI_NAME, plain: 'alice', nested: { x: '\u009b' } }));
    expect(line).toBe(
      '1970-01-01T00:00:00.000Z INFO  a\\u001bb username="\\u001b[2J\\u001b[31mroot\\u001b[0m\\rforged INFO  login userId=U1\\u009b1m" plain=alice nested={"x":"\\u009b"}\n',
    );
    expect(line.slice(0, -1)).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
  });

  it('a value with no space or quote but an escape sequence is quoted and escaped too', () => {
    expect(formatLogLine(JSON.stringify({ level: 30, time: 0, msg: 'm', u: '\u001b[31mred' }))).toBe('1970-01-01T00:00:00.000Z INFO  m u="\\u001b[31mred"\n');
  });
});

describe('a login username with escape sequences', () => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  it('is logged escaped, on one line', async () => {
    const { out, text } = capture();
    t = await makeAuthApp({ logger: createLogger({ out }) });
    const res = await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { username: ANSI_NAME, password: 'whatever-1' } });
    expect(res.statusCode).toBe(401);
    const lines = text().split('\n').filter((l) => l.includes('login refused'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('username="\\u001b[2J\\u001b[31mroot\\u001b[0m\\rforged');
    expect(text().replace(/\n/g, '')).not.toMatch(/[\x00-\x1f\x7f-\x9f]/);
  });
});

describe('batched log output', () => {
  it('writes the lines of one turn of the event loop in one write, at its end', async () => {
    const writes: string[] = [];
    const out = new Writable({
      write(chunk: Buffer, _enc, cb) {
        writes.push(chunk.toString('utf8'));
        cb();
      },
    });
    const log = createLogger({ out, batch: true });
    log.info('one');
    log.info('two');
    expect(writes).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(1);
    expect(writes[0].split('\n').filter(Boolean).map((l) => l.slice(25))).toEqual(['INFO  one', 'INFO  two']);
    log.info('three');
    await new Promise((r) => setImmediate(r));
    expect(writes).toHaveLength(2);
  });
});
