import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Batch, Row } from '../../types.ts';
import { BatchSpill, NumberSpill, kthSmallest, tempFolder } from '../spill.ts';
import { type RuleSpec, StepConfigError, type StepContext, type StepRunner, isNullish, numberOf, rulesOf, show } from '../step.ts';

export interface QualityOptions {
  /** Where temporary files go (spilled rows, key hashes). */
  tmpDir: string;
  /** Quantiles: numbers sorted in memory at most (more are narrowed by histogram passes first). */
  quantileMemoryCap?: number;
}

type Stage = (input: AsyncIterable<Batch>, ctx: StepContext, tmp: string) => AsyncIterable<Batch>;

/** A key's 128-bit hash: fixed size, whatever the key holds; values are typed (1 and "1" differ). */
function keyHash(row: Row, keys: string[]): Buffer {
  const h = createHash('md5');
  for (const k of keys) {
    const v = row[k];
    h.update(v instanceof Date ? `d${v.toISOString()}` : typeof v === 'bigint' ? `n${v}` : `${typeof v}${JSON.stringify(v ?? null)}`);
    h.update('\u0000');
  }
  return h.digest();
}

/**
 * deduplicate: keeps the first row (source order) of each key. Seen keys live as 16-byte hashes in
 * a temporary SQLite file (8 MB page cache), so memory does not grow with the number of keys.
 */
function deduplicate(rule: RuleSpec, i: number): Stage {
  const keys = rule.params.keys;
  if (!Array.isArray(keys) || keys.length === 0 || !keys.every((k) => typeof k === 'string')) {
    throw new StepConfigError(`config.rules[${i}].params.keys must list at least one field`);
  }
  const fields = keys as string[];
  return async function* (input, ctx, tmp) {
    const db = new Database(join(tmp, `dedupe-${i}.sqlite`));
    try {
      db.pragma('journal_mode = OFF');
      db.pragma('synchronous = OFF');
      db.pragma('cache_size = -8000');
      db.exec('CREATE TABLE seen (h BLOB PRIMARY KEY) WITHOUT ROWID');
      const insert = db.prepare('INSERT OR IGNORE INTO seen (h) VALUES (?)');
      const filter = db.transaction((batch: Batch): Batch => {
        const out: Batch = [];
        for (const row of batch) {
          if (insert.run(keyHash(row, fields)).changes === 1) out.push(row);
          else ctx.reject(row, [`deduplicate: ${fields.map((f) => `${f} = ${show(row[f])}`).join(', ')} is a duplicate of an earlier row`]);
        }
        return out;
      });
      for await (const batch of input) yield filter(batch);
    } finally {
      db.close();
    }
  };
}

/**
 * outlier_detection: two passes. The first spills the rows and the field's numbers to temporary
 * files while computing mean and deviation (zscore) — the second reads the rows back and rejects
 * outliers. IQR quartiles are exact (linear interpolation) with bounded memory (`kthSmallest`).
 * Rows whose value is not a number are kept and take no part in the statistics.
 */
function outliers(rule: RuleSpec, i: number, opts: QualityOptions): Stage {
  const method = rule.params.method;
  const threshold = rule.params.threshold;
  if (method !== 'zscore' && method !== 'iqr') throw new StepConfigError(`config.rules[${i}].params.method must be zscore or iqr`);
  if (typeof threshold !== 'number' || !Number.isFinite(threshold) || threshold < 0) {
    throw new StepConfigError(`config.rules[${i}].params.threshold must be a number of at least 0`);
  }
  const field = rule.field;
  return async function* (input, ctx, tmp) {
    const rows = new BatchSpill(join(tmp, `outlier-rows-${i}.bin`));
    const values = new NumberSpill(join(tmp, `outlier-values-${i}.bin`));
    let n = 0;
    let mean = 0;
    let m2 = 0;
    try {
      for await (const batch of input) {
        const nums: number[] = [];
        for (const row of batch) {
          const x = numberOf(row[field]);
          if (x === undefined) continue;
          nums.push(x);
          n++;
          const d = x - mean;
          mean += d / n;
          m2 += d * (x - mean);
        }
        await rows.write(batch);
        if (method === 'iqr') await values.append(Float64Array.from(nums));
      }
      await values.finish();
      let isOutlier: (x: number) => string | undefined = () => undefined;
      if (method === 'zscore' && n > 0) {
        const sd = Math.sqrt(m2 / n);
        if (sd > 0) {
          isOutlier = (x) => {
            const z = Math.abs(x - mean) / sd;
            return z > threshold ? `has a z-score of ${z.toFixed(2)}, above ${threshold} (mean ${round(mean)}, deviation ${round(sd)})` : undefined;
          };
        }
      } else if (method === 'iqr' && n > 0) {
        const quantile = async (p: number): Promise<number> => {
          const pos = p * (n - 1);
          const lo = await kthSmallest(values, Math.floor(pos), opts.quantileMemoryCap);
          const hi = pos === Math.floor(pos) ? lo : await kthSmallest(values, Math.ceil(pos), opts.quantileMemoryCap);
          return lo + (pos - Math.floor(pos)) * (hi - lo);
        };
        const q1 = await quantile(0.25);
        const q3 = await quantile(0.75);
        const low = q1 - threshold * (q3 - q1);
        const high = q3 + threshold * (q3 - q1);
        isOutlier = (x) => (x < low || x > high ? `is outside [${round(low)}, ${round(high)}] (Q1 ${round(q1)}, Q3 ${round(q3)}, iqr × ${threshold})` : undefined);
      }
      for await (const batch of rows.read()) {
        const out: Batch = [];
        for (const row of batch) {
          const x = numberOf(row[field]);
          const problem = x === undefined ? undefined : isOutlier(x);
          if (problem) ctx.reject(row, [`outlier_detection: ${field} = ${show(row[field])} ${problem}`]);
          else out.push(row);
        }
        yield out;
      }
    } finally {
      await rows.close();
      await values.finish();
    }
  };
}

const round = (x: number): number => Math.round(x * 1e4) / 1e4;

/**
 * completeness_check: the share of rows with a non-null value, per field (`fields`, or the rule's
 * `field`), must reach `threshold`; below it the step — and the run — fails. Rows pass unchanged;
 * no rows at all pass the check.
 */
function completeness(rule: RuleSpec, i: number): Stage {
  const threshold = rule.params.threshold;
  if (typeof threshold !== 'number' || threshold < 0 || threshold > 1) throw new StepConfigError(`config.rules[${i}].params.threshold must be a number from 0 to 1`);
  const fields = Array.isArray(rule.params.fields) && rule.params.fields.length > 0 ? rule.params.fields.map(String) : [rule.field];
  return async function* (input) {
    let total = 0;
    const present = new Map(fields.map((f) => [f, 0]));
    for await (const batch of input) {
      total += batch.length;
      for (const row of batch) for (const f of fields) if (!isNullish(row[f])) present.set(f, (present.get(f) as number) + 1);
      yield batch;
    }
    if (total === 0) return;
    const failing = fields
      .map((f) => ({ f, share: (present.get(f) as number) / total }))
      .filter((x) => x.share < threshold)
      .map((x) => `${x.f} is ${round(x.share * 100)}% complete`);
    if (failing.length > 0) throw new Error(`completeness_check: ${failing.join(', ')}, below the threshold ${threshold * 100}%`);
  };
}

/** quality: its rules run in order, each on the rows the previous one kept. */
export class QualityStep implements StepRunner {
  readonly #stages: Stage[];
  readonly #tmpDir: string;

  constructor(config: Record<string, unknown>, opts: QualityOptions) {
    this.#tmpDir = opts.tmpDir;
    this.#stages = rulesOf(config).map((r, i) => {
      switch (r.rule) {
        case 'deduplicate':
          return deduplicate(r, i);
        case 'outlier_detection':
          return outliers(r, i, opts);
        case 'completeness_check':
          return completeness(r, i);
        default:
          throw new StepConfigError(`config.rules[${i}].rule ${show(r.rule)} is not a quality rule`);
      }
    });
  }

  async *run(input: AsyncIterable<Batch>, ctx: StepContext): AsyncIterable<Batch> {
    const tmp = await tempFolder(this.#tmpDir, 'bi-quality-');
    try {
      let stream = input;
      for (const stage of this.#stages) stream = stage(stream, ctx, tmp.path);
      yield* stream;
    } finally {
      await tmp.remove();
    }
  }
}
