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

/**
 * A readable, one-line-per-event logger (pino underneath, so Fastify shares it). `batch` (the
 * default for the process's stdout): the lines of one turn of the event loop go out in one write
 * at its end, not one write (a system call on a pipe) each — a busy server logged as many bytes
 * as it answered; they are written at once at exit, so a crash that exits keeps them (a kill -9
 * loses at most the lines of the turn it cut). With `out` given, each line is written as it comes.
 */
export function createLogger(opts: { level?: string; out?: NodeJS.WritableStream; batch?: boolean } = {}): Logger {
  const out = opts.out ?? process.stdout;
  const emit = opts.batch ?? opts.out === undefined ? batched(out) : (text: string) => void out.write(text);
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) emit(formatLogLine(line));
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

const batchers = new WeakMap<NodeJS.WritableStream, (text: string) => void>();

/** A writer that joins what it is given during one turn of the event loop into one write (one per stream). */
function batched(out: NodeJS.WritableStream): (text: string) => void {
  const known = batchers.get(out);
  if (known) return known;
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    out.write(text);
  };
  process.on('exit', flush);
  const emit = (text: string) => {
    if (pending.length === 0) setImmediate(flush);
    pending.push(text);
  };
  batchers.set(out, emit);
  return emit;
}

export const silentLogger = (): Logger => pino({ level: 'silent' });
