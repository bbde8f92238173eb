/**
 * The code of a search worker thread, as text (`new Worker(code, { eval: true })`): it runs from
 * the sources under tsx and from the esbuild bundle alike, with no second entry point to build.
 * It keeps the corpus of one generation (shared memory, decoded here, off the main thread) and
 * answers `{ id, hits }` or `{ id, error }`.
 */
export const SEARCH_WORKER_SOURCE = String.raw`
const { parentPort, workerData } = require('node:worker_threads');
const { createRequire } = require('node:module');
const { RE2JS } = createRequire(workerData.resolveFrom)('re2js');
let corpus;
parentPort.on('message', (task) => {
  try {
    if (task.corpus) {
      const [ids, names, statuses] = JSON.parse(new TextDecoder().decode(new Uint8Array(task.corpus.text)));
      corpus = { generation: task.corpus.generation, rowids: new Float64Array(task.corpus.rowids), ids, names, statuses };
    }
    if (!corpus || corpus.generation !== task.generation) throw new Error('search worker has no corpus for generation ' + task.generation);
    const test = task.native !== null
      ? ((re) => (s) => re.test(s))(new RegExp(task.native, 'i'))
      : ((re) => (s) => re.test(s))(RE2JS.compile(task.pattern, RE2JS.CASE_INSENSITIVE));
    parentPort.postMessage({ id: task.id, started: true });
    const hits = [];
    const { rowids, ids, names, statuses } = corpus;
    for (let i = 0; i < ids.length; i++) {
      if (task.status !== null && statuses[i] !== task.status) continue;
      if (test(ids[i]) || test(names[i])) hits.push(rowids[i]);
    }
    parentPort.postMessage({ id: task.id, hits });
  } catch (err) {
    parentPort.postMessage({ id: task.id, error: String(err && err.message || err) });
  }
});
`;
