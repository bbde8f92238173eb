// `npm run test:reliability`: real `bictl serve` processes in temp folders, crashed, raced,
// fuzzed, starved of disk and attacked. One file so the suite ends with one summary line.
import { afterAll } from 'vitest';
import { concurrencyScenarios } from './concurrency.ts';
import { crashScenarios } from './crash.ts';
import { faultScenarios } from './faults.ts';
import { fuzzScenarios } from './fuzz.ts';
import { summaryLine, tally } from './harness.ts';
import { limitScenarios } from './limits.ts';
import { oneWriterScenarios } from './one-writer.ts';
import { securityScenarios } from './security.ts';

crashScenarios();
concurrencyScenarios();
fuzzScenarios();
faultScenarios();
securityScenarios();
limitScenarios();
oneWriterScenarios();

afterAll(() => {
  for (const s of tally.scenarios.filter((x) => x.state !== 'passed')) process.stdout.write(`  ${s.state}: ${s.name}${s.note ? ` — ${s.note}` : ''}\n`);
  process.stdout.write(`${summaryLine()}\n`);
});
