// The measurement behind the queue library choice (README "Dependencies", graphile-worker): the
// enqueue -> pickup latency of pg-boss 10 and graphile-worker 0.17 on one machine, one job at a time,
// a fresh schema per run. pg-boss is not a dependency: install both in a scratch folder
// (npm install pg-boss@10 graphile-worker@0.17 pg) and run `node queue-choice.mjs gw|boss [poll s]`.
import PgBoss from 'pg-boss';
import { run, makeWorkerUtils } from 'graphile-worker';
const N = Number(process.env.N ?? 200);
const url = 'postgres://postgres@127.0.0.1:5432/test';
const pct = (a, p) => { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(p / 100 * s.length))]; };
async function bossBench(poll) {
  const schema = `qb_boss_${Date.now()}`;
  const boss = new PgBoss({ connectionString: url, schema });
  boss.on('error', (e) => console.error(e.message));
  await boss.start();
  await boss.createQueue('runs');
  const lat = []; let resolveOne;
  await boss.work('runs', { pollingIntervalSeconds: poll, batchSize: 1 }, async ([job]) => { resolveOne(performance.now() - job.data.t); });
  for (let i = 0; i < N; i++) {
    const p = new Promise((r) => (resolveOne = r));
    await boss.send('runs', { t: performance.now() });
    lat.push(await p);
  }
  await boss.stop({ graceful: false, destroy: true });
  return lat;
}
async function gwBench() {
  const schema = `qb_gw_${Date.now()}`;
  const lat = []; let resolveOne;
  const runner = await run({ connectionString: url, schema, concurrency: 2, noHandleSignals: true, pollInterval: 2000, taskList: { runs: async (p) => { resolveOne(performance.now() - p.t); } }, logger: undefined });
  const utils = await makeWorkerUtils({ connectionString: url, schema });
  for (let i = 0; i < N; i++) {
    const p = new Promise((r) => (resolveOne = r));
    await utils.addJob('runs', { t: performance.now() });
    lat.push(await p);
  }
  await utils.release(); await runner.stop();
  return lat;
}
const which = process.argv[2];
const lat = which === 'gw' ? await gwBench() : await bossBench(Number(process.argv[3] ?? 0.5));
console.log(which, process.argv[3] ?? '', 'n', lat.length, 'p50', pct(lat, 50).toFixed(1), 'p99', pct(lat, 99).toFixed(1), 'ms');
process.exit(0);
