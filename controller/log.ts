import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

export type { Logger };

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const SKIP = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'v']);

const CONTROL = /[\x00-\x1f\x7f-\x9f\u2028\u2029]/g;
const NEEDS_QUOTES = /[\s"\\\x00-\x1f\x7f-\x9f\u2028\u2029]/;

/**
 * Control characters as `\uXXXX`: a logged value (a login username, a file name) can never
 * move the cursor, recolour the terminal or forge a second log line.
 */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function formatValue(v: unknown): string {
  if (typeof v === 'string') return NEEDS_QUOTES.test(v) ? escapeControl(JSON.stringify(v)) : v;
  return escapeControl(JSON.stringify(v) ?? String(v));
}

/** One pino JSON line → `2026-11-21T10:00:00.000Z INFO  message key=value …`. */
export function formatLogLine(line: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return `${escapeControl(line)}\n`;
  }
  const time = new Date(typeof rec.time === 'number' ? rec.time : Date.now()).toISOString();
  const level = (LEVELS[rec.level as number] ?? String(rec.level)).padEnd(5);
  const fields = Object.entries(rec)
    .filter(([k]) => !SKIP.has(k))
    .map(([k, v]) => `${escapeControl(k)}=${formatValue(v)}`);
  return `${time} ${level} ${escapeControl(String(rec.msg ?? ''))}${fields.length ? ` ${fields.join(' ')}` : ''}\n`;
}

/** A readable, one-line-per-event logger (pino underneath, so Fastify shares it). */
export function createLogger(opts: { level?: string; out?: NodeJS.WritableStream } = {}): Logger {
  const out = opts.out ?? process.stdout;
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) out.write(formatLogLine(line));
      cb();
    },
  });
  return pino(
    {
      level: opts.level ?? 'info',
      base: undefined,
      redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie', 'password', 'apiKey'], censor: '[redacted]' },
    },
    stream,
  );
}

export const silentLogger = (): Logger => pino({ level: 'silent' });
