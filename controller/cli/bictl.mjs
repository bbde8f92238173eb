#!/usr/bin/env node
// The `bictl` binary. Runs the bundle of the TypeScript sources (dist/bictl.mjs), rebuilding it
// first when a source is newer; falls back to loading the sources through tsx if that fails.
import { buildBundle, bundleIsFresh, BUNDLE } from './build.mjs';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';

// The old generation may grow by HEAP_GROWING_PERCENT past what a full collection left live
// (docs/configuration.md, after the variables). V8's own factor, up to 4 x, let a 10,000-file sync's
// promoted garbage pile up to a ~120 MB heap before its first full collection (live: ~45 MB).
// V8 reads the flag at each collection, so setting it here works for `npm start` and the bin
// alike; a `--heap-growing-percent` given to node (command line or NODE_OPTIONS) wins.
const HEAP_GROWING_PERCENT = 30;
const nodeFlags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
if (!nodeFlags.some((f) => /^--heap[-_]growing[-_]percent\b/.test(f))) setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);

async function load() {
  try {
    if (!bundleIsFresh()) await buildBundle();
    return await import(pathToFileURL(BUNDLE).href);
  } catch (err) {
    if (process.env.BI_DEBUG_LAUNCH) console.error(`bictl: bundle unavailable (${err.message}); loading sources`);
    const { register } = await import('tsx/esm/api');
    register();
    return import('./main.ts');
  }
}

const { main } = await load();
process.exitCode = await main(process.argv);
