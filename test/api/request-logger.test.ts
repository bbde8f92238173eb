import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { LazyChildLogger, lazyChildLoggerFactory } from '../../api/request-logger.ts';

function capture(level = 'info') {
  const lines: Record<string, unknown>[] = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { logger: pino({ level, base: undefined }, out), lines };
}

describe('the request logger', () => {
  it('logs with the request ID bound, as pino\'s child does', () => {
    const { logger, lines } = capture();
    const log = lazyChildLoggerFactory(logger, { reqId: 'req-7' }, {});
    log.info({ status: 500 }, 'failed');
    log.error('worse');
    expect(lines.map((l) => [l.reqId, l.msg])).toEqual([
      ['req-7', 'failed'],
      ['req-7', 'worse'],
    ]);
    expect(lines[0]?.status).toBe(500);
  });

  it('makes no child for a request that logs nothing at an enabled level', () => {
    const { logger, lines } = capture('info');
    const child = vi.spyOn(logger, 'child');
    const log = lazyChildLoggerFactory(logger, { reqId: 'req-1' }, {});
    expect(log).toBeInstanceOf(LazyChildLogger);
    log.debug('not shown at info');
    log.trace('nor this');
    expect(child).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
    expect(log.isLevelEnabled('debug')).toBe(false);
    expect(log.level).toBe('info');
  });

  it('follows a level set on it, and hands out pino children with the binding', () => {
    const { logger, lines } = capture('info');
    const log = lazyChildLoggerFactory(logger, { reqId: 'req-2' }, {});
    log.level = 'debug';
    log.debug('now shown');
    log.child({ step: 'x' }).info('nested');
    expect(lines.map((l) => [l.reqId, l.step, l.msg])).toEqual([
      ['req-2', undefined, 'now shown'],
      ['req-2', 'x', 'nested'],
    ]);
    expect(logger.level).toBe('info');
  });

  it('gives a route with its own log options pino\'s child', () => {
    const { logger } = capture();
    const log = lazyChildLoggerFactory(logger, { reqId: 'req-3' }, { level: 'warn' });
    expect(log).not.toBeInstanceOf(LazyChildLogger);
    expect(log.level).toBe('warn');
  });
});
