// The import rules of the tree (run by `npm run lint:deps`, part of `npm test`): no cycles, and no
// import running back up a layer. Layers, bottom first:
//   contract  controller/{types,contract,errors,clock,dates,hash,mutex,objects,paths,semaphore,log,config}.ts,
//             controller/generated/, controller/lib/ (general helpers everyone may use)
//   store     controller/store/
//   domain    manifest, secrets, connections, auth, authz, kinds
//   loop      reconciler, sources, writers, git, runs, notify, metrics
//   use cases controller/usecases/, controller/runtime.ts
//   edges     api/, controller/cli/
const CONTRACT = '^controller/(types|contract|errors|clock|dates|hash|mutex|objects|paths|semaphore|log|config)\\.ts$|^controller/(generated|lib)/';
const STORE = '^controller/store/';
const DOMAIN = '^controller/(manifest|secrets|connections|auth|authz|kinds)/';
const LOOP = '^controller/(reconciler|sources|writers|git|runs|notify|metrics)/';
const USECASES = '^controller/usecases/|^controller/runtime\\.ts$';
const EDGES = '^api/|^controller/cli/';

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'An import cycle ties modules that should stand apart (type imports count too).', from: {}, to: { circular: true } },
    { name: 'contract-is-the-bottom', severity: 'error', comment: 'The contract layer imports nothing above it (the store handle type aside).', from: { path: CONTRACT }, to: { path: `${STORE}|${DOMAIN}|${LOOP}|${USECASES}|${EDGES}`, pathNot: '^controller/store/(db|statement-cache)\\.ts$' } },
    { name: 'store-below-domain', severity: 'error', from: { path: STORE }, to: { path: `${DOMAIN}|${LOOP}|${USECASES}|${EDGES}` } },
    { name: 'domain-below-loop', severity: 'error', from: { path: DOMAIN }, to: { path: `${LOOP}|${USECASES}|${EDGES}` } },
    { name: 'loop-below-usecases', severity: 'error', from: { path: LOOP }, to: { path: `${USECASES}|${EDGES}` } },
    { name: 'usecases-below-edges', severity: 'error', from: { path: USECASES }, to: { path: EDGES } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^(controller|api)/',
    exclude: { path: '^api/ui/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.mjs', '.js', '.json'] },
  },
};
