#!/usr/bin/env node
// The `bictl` binary. Runs the bundle of the TypeScript sources (dist/bictl.mjs), rebuilding it
// first when a source is newer; falls back to loading the sources through tsx if that fails.
import { buildBundle, bundleIsFresh, BUNDLE } from './build.mjs';
import { pathToFileURL } from 'node:url';

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
