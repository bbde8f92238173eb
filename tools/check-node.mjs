#!/usr/bin/env node
// CI's first step: the running Node must satisfy package.json `engines.node` (space-separated
// comparators `>=`, `>`, `<=`, `<`, `=` joined by `||`), so a run on an unsupported Node fails
// at once instead of somewhere in the suites.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const parse = (v) => v.replace(/^v/, '').split('.').map((n) => Number(n) || 0).concat([0, 0, 0]).slice(0, 3);
const cmp = (a, b) => a.reduce((r, x, i) => r || Math.sign(x - b[i]), 0);

/** Whether `version` (`v20.20.2`) satisfies `range` (`>=20.19 <21 || >=22.12`). */
export function satisfies(version, range) {
  return range.split('||').some((alt) =>
    alt.trim().split(/\s+/).filter(Boolean).every((c) => {
      const m = /^(>=|<=|>|<|=)?v?(\d+(?:\.\d+){0,2})$/.exec(c);
      if (!m) throw new Error(`engines.node: cannot read the comparator ${JSON.stringify(c)}`);
      const d = cmp(parse(version), parse(m[2]));
      return { '>=': d >= 0, '<=': d <= 0, '>': d > 0, '<': d < 0, '=': d === 0, undefined: d === 0 }[m[1]];
    }),
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const range = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines.node;
  if (!satisfies(process.version, range)) {
    console.error(`node ${process.version} does not satisfy engines.node ${range} (package.json)`);
    process.exit(1);
  }
  console.log(`node ${process.version} satisfies engines.node ${range}`);
}
