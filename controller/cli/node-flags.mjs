// Node flags the server runs with. One list: `npm start`, `npm run bictl`, the `bictl` launcher's
// shebang and the benchmark's server all use it (test/controller/cli/node-flags.test.ts checks).
//
// --max-semi-space-size=4: V8's young generation keeps up to 3 × 16 MB of semi-spaces by default,
// reserved once a burst has grown them, which is most of what the server's peak RSS has beyond its
// live data. With 4 MB: peak RSS of the 10,000-manifest scale bench 226–232 → 195 MB, with cold sync,
// import and chart-types throughput unchanged within the run-to-run spread (npm run bench, same hour).
export const SERVE_NODE_FLAGS = ['--max-semi-space-size=4'];
