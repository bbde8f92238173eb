import { createHash } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import { formatIdentity, type GitIdentity } from './identity.ts';
import type { ImportCommit } from './fast-import.ts';

/**
 * A batch's commits built in this process instead of a `git fast-import` process: blobs, trees
 * and commits hashed (SHA-1) and deflated here, written as one pack and its index (version 2),
 * as fast-import would, without a process start and without a file per object. A changed tree is
 * stored as a delta against its version earlier in the same pack (its edit is known: one entry),
 * so the push reuses it instead of searching for one.
 */

/** Trees known by path ('' = the root) at one commit; null: no tree there. */
export type TreeSnapshot = Map<string, Tree | null>;

/** A tree: its bytes as git stores them (sorted entries) and its id. */
export interface Tree {
  bytes: Buffer;
  id: string;
}

/** One object of the pack being built. */
interface PackObject {
  id: string;
  /** 1 commit, 2 tree, 3 blob, 6 offset delta. */
  type: number;
  /** The whole object, or the delta's instructions. */
  data: Buffer;
  /** Offset delta: the index of its base in the pack. */
  base?: number;
}

const TYPE = { commit: 1, tree: 2, blob: 3 } as const;
const EMPTY = Buffer.alloc(0);

/** The id of an object of `type` with `body`, as git hashes it. */
export function objectId(type: keyof typeof TYPE, body: Buffer): string {
  return createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');
}

/** The result of building a batch: the pack and index bytes, the last commit, the trees at each commit built. */
export interface BuiltPack {
  pack: Buffer;
  idx: Buffer;
  /** The pack's checksum (hex): its file name is `pack-<checksum>.pack`. */
  checksum: string;
  tip: string;
  /** The trees at the tip: the base's, with those the batch changed. */
  trees: TreeSnapshot;
}

export interface BuildInput {
  base: string | null;
  commits: ImportCommit[];
  committer: GitIdentity;
  /** Trees at `base` for every folder the commits touch and their parents ('' = the root); null where none is. */
  trees: TreeSnapshot;
  /** Seconds since the epoch and the zone's offset in minutes east of UTC, of the commits. */
  when: { seconds: number; offsetMinutes: number };
}

/** Every folder a commit of `paths` touches, the root ('') included. */
export function foldersOf(paths: Iterable<string>): Set<string> {
  const out = new Set<string>(['']);
  for (const path of paths) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) out.add(parts.slice(0, i).join('/'));
  }
  return out;
}

/** Builds `commits` (one each, in order) on `base` into one pack. */
export function buildPack(input: BuildInput): BuiltPack {
  const objects: PackObject[] = [];
  const seen = new Set<string>();
  /** Where each tree version written into this pack is (by id): a later version of its folder is a delta against it. */
  const written = new Map<string, { at: number; depth: number }>();
  const add = (obj: PackObject) => {
    if (seen.has(obj.id)) return;
    seen.add(obj.id);
    objects.push(obj);
  };
  const trees: TreeSnapshot = new Map(input.trees);
  let parent = input.base;
  const date = gitDate(input.when);
  for (const c of input.commits) {
    const parts = c.path.split('/');
    const name = parts.pop() ?? '';
    if (!name || parts.some((p) => p === '' || p === '.' || p === '..') || name === '.' || name === '..') throw new Error(`not a repository path: ${c.path}`);
    // The file's own entry, then each folder up to the root.
    let entry: TreeEntry | null = null;
    if (c.content !== null) {
      const blob = Buffer.from(c.content, 'utf8');
      const id = objectId('blob', blob);
      add({ id, type: TYPE.blob, data: blob });
      entry = { mode: '100644', name, id };
    }
    let childName = name;
    for (let depth = parts.length; depth >= 0; depth--) {
      const dir = parts.slice(0, depth).join('/');
      if (!trees.has(dir)) throw new Error(`the tree of ${dir || 'the root'} was not loaded`);
      const old = trees.get(dir) ?? null;
      const bytes = withEntry(old?.bytes ?? EMPTY, childName, entry);
      const next: Tree | null = bytes.length === 0 && dir !== '' ? null : { bytes, id: objectId('tree', bytes) };
      trees.set(dir, next);
      if (next && !seen.has(next.id)) {
        const prior = old ? written.get(old.id) : undefined;
        // A chain no longer than git's own default depth (50): a longer one is not reused by a push.
        if (prior !== undefined && old && prior.depth < 50) add({ id: next.id, type: 6, data: delta(old.bytes, bytes), base: prior.at });
        else add({ id: next.id, type: TYPE.tree, data: bytes });
        written.set(next.id, { at: objects.length - 1, depth: prior !== undefined && prior.depth < 50 ? prior.depth + 1 : 0 });
      }
      entry = next ? { mode: '40000', name: parts[depth - 1] ?? '', id: next.id } : null;
      childName = parts[depth - 1] ?? '';
    }
    const root = trees.get('') as Tree;
    const text =
      `tree ${root.id}\n` +
      (parent ? `parent ${parent}\n` : '') +
      `author ${formatIdentity(c.author)} ${date}\n` +
      `committer ${formatIdentity(input.committer)} ${date}\n\n` +
      `${c.message}\n`;
    const body = Buffer.from(text, 'utf8');
    parent = objectId('commit', body);
    add({ id: parent, type: TYPE.commit, data: body });
  }
  if (!parent || input.commits.length === 0) throw new Error('no commit to build');
  return { ...writePack(objects), tip: parent, trees };
}

/** `seconds +hhmm`, as git writes a date. */
function gitDate(when: { seconds: number; offsetMinutes: number }): string {
  const abs = Math.abs(when.offsetMinutes);
  const zone = `${when.offsetMinutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
  return `${Math.floor(when.seconds)} ${zone}`;
}

interface TreeEntry {
  mode: string;
  name: string;
  id: string;
}

/**
 * The tree `bytes` with the entry named `name` replaced by `entry` (null: removed), in git's
 * order (names compared as bytes, a folder's as if it ended in '/').
 */
export function withEntry(bytes: Buffer, name: string, entry: TreeEntry | null): Buffer {
  const nameBytes = Buffer.from(name, 'utf8');
  const isTree = entry?.mode === '40000';
  let removeAt = -1;
  let removeEnd = -1;
  let insertAt = -1;
  for (let pos = 0; pos < bytes.length; ) {
    const space = bytes.indexOf(0x20, pos);
    const nul = bytes.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > bytes.length) throw new Error('a malformed tree');
    const end = nul + 21;
    const cmp = compareNames(bytes, space + 1, nul, bytes[pos] === 0x34, nameBytes, isTree);
    if (nul - space - 1 === nameBytes.length && bytes.compare(nameBytes, 0, nameBytes.length, space + 1, nul) === 0) {
      removeAt = pos;
      removeEnd = end;
    } else if (entry && insertAt < 0 && cmp > 0) insertAt = pos;
    pos = end;
  }
  if (insertAt < 0) insertAt = bytes.length;
  const parts: Buffer[] = [];
  const keep = (from: number, to: number) => {
    // The removed entry's bytes are skipped wherever they fall.
    if (removeAt >= from && removeAt < to) {
      parts.push(bytes.subarray(from, removeAt), bytes.subarray(removeEnd, to));
    } else parts.push(bytes.subarray(from, to));
  };
  keep(0, insertAt);
  if (entry) parts.push(Buffer.from(`${entry.mode} `, 'latin1'), nameBytes, Buffer.from([0]), Buffer.from(entry.id, 'hex'));
  keep(insertAt, bytes.length);
  return Buffer.concat(parts);
}

/**
 * Git's order of two tree entries: the tree's entry `bytes[start, end)` (a folder when `aTree`:
 * its mode starts with 4) against `b`, each name compared as if a folder's ended in '/'.
 */
function compareNames(bytes: Buffer, start: number, end: number, aTree: boolean, b: Buffer, bTree: boolean): number {
  const aLen = end - start;
  const n = Math.min(aLen, b.length);
  for (let i = 0; i < n; i++) {
    const d = bytes[start + i] - b[i];
    if (d !== 0) return d;
  }
  const a1 = aLen > n ? bytes[start + n] : aTree ? 0x2f : 0;
  const b1 = b.length > n ? b[n] : bTree ? 0x2f : 0;
  return a1 - b1;
}

/** Git delta instructions turning `from` into `to`: the common start and end copied, the middle inserted. */
export function delta(from: Buffer, to: Buffer): Buffer {
  let head = 0;
  const max = Math.min(from.length, to.length);
  while (head < max && from[head] === to[head]) head++;
  let tail = 0;
  while (tail < max - head && from[from.length - 1 - tail] === to[to.length - 1 - tail]) tail++;
  const out: number[] = [...varint(from.length), ...varint(to.length)];
  const copy = (offset: number, size: number) => {
    for (let done = 0; done < size; ) {
      const n = Math.min(size - done, 0xffffff);
      const o = offset + done;
      let op = 0x80;
      const args: number[] = [];
      for (let i = 0; i < 4; i++) {
        const b = (o >>> (8 * i)) & 0xff;
        if (b) {
          op |= 1 << i;
          args.push(b);
        }
      }
      for (let i = 0; i < 3; i++) {
        const b = (n >>> (8 * i)) & 0xff;
        if (b) {
          op |= 0x10 << i;
          args.push(b);
        }
      }
      out.push(op, ...args);
      done += n;
    }
  };
  if (head > 0) copy(0, head);
  for (let at = head; at < to.length - tail; at += 127) {
    const chunk = to.subarray(at, Math.min(at + 127, to.length - tail));
    out.push(chunk.length, ...chunk);
  }
  if (tail > 0) copy(from.length - tail, tail);
  return Buffer.from(out);
}

/** A delta header's size: 7 bits a byte, low first. */
function varint(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

/** The pack (version 2) of `objects`, in order, and its index (version 2). */
function writePack(objects: PackObject[]): { pack: Buffer; idx: Buffer; checksum: string } {
  const parts: Buffer[] = [];
  const header = Buffer.alloc(12);
  header.write('PACK', 0, 'latin1');
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(objects.length, 8);
  parts.push(header);
  let offset = 12;
  const offsets: number[] = [];
  const crcs: number[] = [];
  for (const obj of objects) {
    const head: number[] = [];
    let size = obj.data.length;
    let b = (obj.type << 4) | (size & 0x0f);
    size = Math.floor(size / 16);
    while (size > 0) {
      head.push(b | 0x80);
      b = size & 0x7f;
      size = Math.floor(size / 128);
    }
    head.push(b);
    if (obj.base !== undefined) head.push(...ofsDistance(offset - offsets[obj.base]));
    const entry = Buffer.concat([Buffer.from(head), deflateSync(obj.data)]);
    offsets.push(offset);
    crcs.push(crc32(entry));
    parts.push(entry);
    offset += entry.length;
  }
  const hash = createHash('sha1');
  for (const p of parts) hash.update(p);
  const trailer = hash.digest();
  parts.push(trailer);
  const pack = Buffer.concat(parts);
  return { pack, idx: writeIndex(objects.map((o) => o.id), offsets, crcs, trailer), checksum: trailer.toString('hex') };
}

/** An offset delta's distance back to its base, as git encodes it. */
function ofsDistance(distance: number): number[] {
  const bytes = [distance & 0x7f];
  let n = Math.floor(distance / 128);
  while (n > 0) {
    n -= 1;
    bytes.unshift(0x80 | (n & 0x7f));
    n = Math.floor(n / 128);
  }
  return bytes;
}

/** The pack index (version 2): fan-out, sorted ids, CRCs, offsets, the pack's checksum, its own. */
function writeIndex(ids: string[], offsets: number[], crcs: number[], packChecksum: Buffer): Buffer {
  const order = ids.map((_, i) => i).sort((a, b) => (ids[a] < ids[b] ? -1 : ids[a] > ids[b] ? 1 : 0));
  const n = ids.length;
  const out = Buffer.alloc(8 + 256 * 4 + n * 20 + n * 4 + n * 4 + 40);
  out.writeUInt32BE(0xff744f63, 0);
  out.writeUInt32BE(2, 4);
  const fanout = new Array<number>(256).fill(0);
  for (const id of ids) fanout[parseInt(id.slice(0, 2), 16)]++;
  let total = 0;
  for (let i = 0; i < 256; i++) {
    total += fanout[i];
    out.writeUInt32BE(total, 8 + i * 4);
  }
  let at = 8 + 1024;
  for (const i of order) {
    out.write(ids[i], at, 'hex');
    at += 20;
  }
  for (const i of order) {
    out.writeUInt32BE(crcs[i] >>> 0, at);
    at += 4;
  }
  for (const i of order) {
    // Packs this small never reach 2 GiB (the large-offset table).
    out.writeUInt32BE(offsets[i], at);
    at += 4;
  }
  packChecksum.copy(out, at);
  at += 20;
  createHash('sha1').update(out.subarray(0, at)).digest().copy(out, at);
  return out;
}
