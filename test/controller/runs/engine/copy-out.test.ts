import type { to as copyTo } from 'pg-copy-streams';
import { describe, expect, it } from 'vitest';
import { copyOutStream } from '../../../../controller/runs/engine/sources/copy-out.ts';

const message = (code: string, payload: Buffer | string): Buffer => {
  const body = Buffer.from(payload);
  const head = Buffer.alloc(5);
  head[0] = code.charCodeAt(0);
  head.writeUInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
};

/**
 * What a copy-out stream pushes, and what pg reads after it (bytes handed back + later chunks), fed
 * a copy of `wire` cut at `cuts` (the parser moves payloads within the chunks it is given: the
 * bytes pg reads afterwards are read from the same copy, so they must be untouched).
 */
async function feed(stream: ReturnType<typeof copyTo>, original: Buffer, cuts: number[]): Promise<{ data: string; ended: boolean; handedBack: string | undefined }> {
  const wire = Buffer.from(original);
  const q = stream as unknown as { _parse(b: Buffer): unknown; _detach(): void; _buffer: { size: number; take(n: number): Buffer } };
  let handedBack: string | undefined;
  let detached = false;
  q._detach = () => {
    detached = true;
    handedBack = q._buffer.take(q._buffer.size).toString('latin1');
  };
  const parts: Buffer[] = [];
  let ended = false;
  stream.on('data', (b: Buffer) => parts.push(Buffer.from(b)));
  stream.on('end', () => (ended = true));
  let from = 0;
  for (const cut of [...cuts, wire.length]) {
    if (detached) break;
    q._parse(wire.subarray(from, cut));
    from = cut;
  }
  // once detached, later chunks go to pg directly
  if (handedBack !== undefined) handedBack += wire.subarray(from).toString('latin1');
  // pushed chunks reach 'data' listeners on a later tick
  await new Promise((r) => setImmediate(r));
  return { data: Buffer.concat(parts).toString('utf8'), ended, handedBack };
}

const rows = ['1\tünï 😀\n', '2\t\\N\n', '', '3\ta\\tb\n'];
const wire = Buffer.concat([
  message('H', Buffer.from([0, 0, 2, 0, 0, 0, 0])),
  ...rows.map((r) => message('d', r)),
  message('N', 'a notice in between'),
  message('d', '4\tlast\n'),
  message('c', ''),
  message('C', 'COPY 4\0'),
  message('Z', 'I'),
]);

describe('copy-out parser (one buffer per chunk)', () => {
  it('pushes every CopyData payload in order and hands the bytes after CopyDone back to pg, wherever the chunks are cut', async () => {
    const expected = {
      data: `${rows.join('')}4\tlast\n`,
      ended: true,
      handedBack: Buffer.concat([message('C', 'COPY 4\0'), message('Z', 'I')]).toString('latin1'),
    };
    // (a socket never gives an empty chunk: every cut is inside the wire)
    const cutsList: number[][] = [[]];
    for (let a = 1; a < wire.length; a++) for (const b of [a + 1, a + 7, a + 40].filter((x) => x < wire.length)) cutsList.push([a, b]);
    for (const cuts of cutsList) {
      const stream = copyOutStream('COPY x TO STDOUT', { highWaterMark: 1 << 20 });
      expect([cuts, await feed(stream, wire, cuts)]).toEqual([cuts, expected]);
    }
  });

  it('an ErrorResponse goes back to pg from its first byte', async () => {
    const error = message('E', 'SERROR\0');
    const q = copyOutStream('COPY x TO STDOUT', { highWaterMark: 1 << 20 });
    const out = await feed(q, Buffer.concat([message('H', Buffer.from([0, 0, 0])), message('d', '1\n'), error]), [3]);
    expect(out.handedBack).toBe(error.toString('latin1'));
    expect(out.ended).toBe(false);
  });
});
