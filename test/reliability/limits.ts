import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect } from 'vitest';
import { git } from '../../bench/lib/git.ts';
import { dashboardPayload } from '../../bench/lib/payloads.ts';
import { freePort, REPO_ROOT, ServerProcess } from '../../bench/lib/server-process.ts';
import { errorText, request, requireRoute, scenario, startServer, until } from './harness.ts';

/** Waves of 300 concurrent wrong logins until killed; prints `wave 401=n 503=m` per wave. */
const STORM_SCRIPT = `
const url = process.argv[1];
for (let round = 0; ; round++) {
  const codes = await Promise.all(Array.from({ length: 300 }, (_, i) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'storm-' + round + '-' + i, password: 'not-the-password' }) })
      .then(async (r) => { await r.text(); return r.status; }, () => 0)));
  const count = {};
  for (const c of codes) count[c] = (count[c] ?? 0) + 1;
  console.log('wave ' + Object.entries(count).map(([k, v]) => k + '=' + v).join(' '));
}
`;

const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.99))];

/** A raw socket to the server; `closedWithin` resolves with the ms until the server closed it. */
function rawSocket(url: string): Promise<{ socket: Socket; closed: Promise<number>; received: () => string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: u.hostname, port: Number(u.port) });
    let text = '';
    const t0 = performance.now();
    const closed = new Promise<number>((r) => socket.on('close', () => r(performance.now() - t0)));
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', () => {});
    socket.once('connect', () => resolve({ socket, closed, received: () => text }));
    socket.once('error', reject);
  });
}

/** A TCP "git remote" that accepts connections and never answers (a black-holed host). */
async function silentRemote(): Promise<{ url: string; server: Server; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createServer((s) => {
    sockets.push(s);
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/manifests.git`, server, sockets };
}

/** /healthz latencies sampled every 10 ms while `work` runs. */
async function healthDuring<T>(url: string, work: Promise<T>): Promise<{ result: T; samples: number[] }> {
  const samples: number[] = [];
  let done = false;
  const probe = (async () => {
    while (!done) {
      const t0 = performance.now();
      const res = await fetch(`${url}/healthz`);
      await res.text();
      samples.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const result = await work.finally(() => (done = true));
  await probe;
  return { result, samples };
}

export function limitScenarios(): void {
  describe('limits under concurrency', () => {
    scenario('40 concurrent wrong passwords over real sockets get the same 10 tries as 40 in a row; a right one in a burst is refused', async () => {
      const ctx = await startServer('login-burst');
      try {
        const url = `${ctx.server.url}/v1/auth/login`;
        const burst = await Promise.all(Array.from({ length: 40 }, () => request(url, { body: { username: ctx.server.opts.adminUser, password: 'wrong-guess' } })));
        const codes = burst.map((r) => r.status);
        expect(codes.filter((c) => c === 401)).toHaveLength(10);
        expect(codes.filter((c) => c !== 401).every((c) => c === 429 || c === 503)).toBe(true);
        const right = await request(url, { body: { username: ctx.server.opts.adminUser, password: ctx.server.opts.adminPassword } });
        expect(right.status).toBe(429);
      } finally {
        await ctx.close();
      }
    });

    scenario('a storm of 300 concurrent logins never starves writes: an unrelated import stays under 100 ms p99, or no slower than under the same load without hashes', async (s) => {
      // Failures are not limited here, so every login wants a password hash.
      const ctx = await startServer('login-storm', { env: { BI_LOGIN_MAX_FAILURES: '100000' } });
      try {
        await requireRoute(s, ctx, 'POST', '/v1/sdk/import', ctx.keyHeaders, 'issue 5');
        const base = ctx.server.url;
        const warm = await request(`${base}/v1/sdk/import`, { body: dashboardPayload('storm-warm'), headers: ctx.keyHeaders });
        expect(warm.status, warm.text).toBe(201);
        const importLatencies = async (n: number, tag: string) => {
          const out: number[] = [];
          for (let i = 0; i < n; i++) {
            const res = await request(`${base}/v1/sdk/import`, { body: dashboardPayload(`${tag}-${i}`), headers: ctx.keyHeaders });
            expect(res.status, res.text.slice(0, 300)).toBe(201);
            out.push(res.ms);
          }
          return out;
        };
        // The same imports without a storm: what this machine's load allows at all.
        // 80 samples a phase: the p99 of 40 was their maximum, one import that met a wave's peak
        // or a GC (the CI once saw 138 ms during logins against 85 ms during logouts).
        const SAMPLES = 80;
        const baseline = await importLatencies(SAMPLES, 'calm');
        // A storm comes from another process, so the import's latency is the server's, not this
        // test process's own event loop busy with 300 answers.
        const during = async (url: string, tag: string) => {
          const storm = spawn(process.execPath, ['--input-type=module', '-e', STORM_SCRIPT, url], { stdio: ['ignore', 'pipe', 'inherit'] });
          let out = '';
          storm.stdout.on('data', (d: Buffer) => (out += d.toString()));
          const done = new Promise<void>((r) => storm.once('exit', () => r()));
          await until(() => out.includes('wave'), 30_000, `the ${tag} storm to start`);
          const latencies = await importLatencies(SAMPLES, tag);
          storm.kill('SIGTERM');
          await done;
          return { latencies, out };
        };
        // Bursts of 300 requests that need no password hash (logout): what accepting and
        // answering 300 requests at once costs on these cores, hashes aside.
        const cheap = await during(`${base}/v1/auth/logout`, 'burst');
        const { latencies, out: stormOut } = await during(`${base}/v1/auth/login`, 'storm');
        // And both again after it: the machine's load drifts (other work shares these cores).
        cheap.latencies.push(...(await during(`${base}/v1/auth/logout`, 'burst-after')).latencies);
        baseline.push(...(await importLatencies(SAMPLES, 'calm-after')));
        const answers = new Map<number, number>();
        for (const m of stormOut.matchAll(/(\d{3})=(\d+)/g)) answers.set(Number(m[1]), (answers.get(Number(m[1])) ?? 0) + Number(m[2]));
        process.stdout.write(
          `  login storm: import p99 ${p99(latencies).toFixed(1)} ms (without a storm ${p99(baseline).toFixed(1)} ms, during bursts of 300 logouts ${p99(cheap.latencies).toFixed(1)} ms, load average ${loadavg()[0].toFixed(1)}); logins answered ${JSON.stringify(Object.fromEntries(answers))}\n`,
        );
        expect(answers.get(401) ?? 0).toBeGreaterThan(0);
        expect([...answers.keys()].every((c) => c === 401 || c === 503)).toBe(true);
        // Under 100 ms, or (on a machine already loaded by other work) no worse than three times
        // the same imports without a storm, or than twice the same imports during bursts that
        // need no hash (on 2 shared cores that burst's own p99 spreads 70-140 ms from run to run):
        // the hashes themselves never starve the writes. Before, the storm took every libuv
        // thread: imports waited 14.6 s.
        const bound = Math.max(100, 3 * p99(baseline), 2 * p99(cheap.latencies));
        expect(p99(latencies)).toBeLessThan(bound);
      } finally {
        await ctx.close();
      }
    });

    scenario('slow clients: headers and whole requests are cut at their timeouts; /healthz keeps answering', async () => {
      const ctx = await startServer('slowloris', { env: { BI_HEADERS_TIMEOUT: '1s', BI_REQUEST_TIMEOUT: '2s', BI_IDLE_TIMEOUT: '10s' } });
      try {
        const base = ctx.server.url;
        // Slowloris: a header line every 200 ms, never the blank line.
        const headers = await rawSocket(base);
        headers.socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n');
        const drip = setInterval(() => headers.socket.writable && headers.socket.write(`x-drip-${Date.now()}: 1\r\n`), 200);
        // A body that never ends: headers at once, then a byte every 200 ms.
        const body = await rawSocket(base);
        body.socket.write('POST /v1/auth/login HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{');
        const trickle = setInterval(() => body.socket.writable && body.socket.write(' '), 200);
        const { samples } = await healthDuring(base, Promise.all([headers.closed, body.closed]));
        clearInterval(drip);
        clearInterval(trickle);
        const [headersMs, bodyMs] = await Promise.all([headers.closed, body.closed]);
        process.stdout.write(`  slow sockets closed after ${headersMs.toFixed(0)} ms (headers) and ${bodyMs.toFixed(0)} ms (body); /healthz max ${Math.max(...samples).toFixed(1)} ms\n`);
        expect(headersMs).toBeGreaterThan(900);
        expect(headersMs).toBeLessThan(2500);
        expect(bodyMs).toBeGreaterThan(1900);
        expect(bodyMs).toBeLessThan(3500);
        expect(headers.received()).toMatch(/^HTTP\/1\.1 408|^$/);
        expect(Math.max(...samples)).toBeLessThan(200);
      } finally {
        await ctx.close();
      }
    });

    scenario('concurrent pathological registry searches never stall other requests', async () => {
      const ctx = await startServer('search-redos');
      try {
        const db = new Database(ctx.server.opts.dbPath);
        db.pragma('busy_timeout = 5000');
        const insert = db.prepare("INSERT INTO clients (client_id, client_name, status, onboarded_date, last_modified_date) VALUES (?, ?, 'ACTIVE', '2026-01-01', '2026-01-01')");
        db.transaction(() => {
          for (let i = 0; i < 5000; i++) insert.run(`REDOS${i}`, `${'a'.repeat(26)}!`);
        })();
        db.close();
        const list = (pattern: string) => request(`${ctx.server.url}/v1/bi/admin/clients/${ctx.session.userId}?search=${encodeURIComponent(pattern)}`, { headers: ctx.session.headers });
        // Each backtracks exponentially over "aaa…a!" (no match is possible).
        const patterns = ['^(a+)+$', '^(a|aa)+$', '^(a+)*$', '^(aa|a)+$', '^((a+))+$', '^(a?a+)+$', '^(a|a?)+$', '^(a+a?)+$'];
        const calm = await healthDuring(ctx.server.url, new Promise((r) => setTimeout(r, 1000)));
        const { result, samples } = await healthDuring(ctx.server.url, Promise.all(patterns.map(list)));
        process.stdout.write(`  8 pathological searches: answers ${result.map((r) => r.status).join(',')}; /healthz p99 ${p99(samples).toFixed(1)} ms over ${samples.length} probes (without searches ${p99(calm.samples).toFixed(1)} ms, load average ${loadavg()[0].toFixed(1)})\n`);
        for (const r of result) {
          expect([400, 503], r.text.slice(0, 300)).toContain(r.status);
          if (r.status === 400) expect(errorText(r)).toMatch(/search pattern is too expensive to evaluate/);
        }
        // Before, one such search held the event loop for its whole budget and several for
        // seconds; now /healthz waits only for its share of two shared cores.
        expect(p99(samples)).toBeLessThan(Math.max(100, 4 * p99(calm.samples)));
        const ok = await list('^redos4999$');
        expect(ok.status, ok.text).toBe(200);
        expect((ok.json as { pagination: { total: number } }).pagination.total).toBe(1);
      } finally {
        await ctx.close();
      }
    });
  });

  describe('operator faults', () => {
    scenario('SIGTERM to a git-mode server whose remote never answers: it leaves within seconds', async () => {
      const remote = await silentRemote();
      const dir = mkdtempSync(join(tmpdir(), 'rel-git-stop-'));
      const server = new ServerProcess({ dir, gitUrl: remote.url });
      try {
        await server.start();
        // The first fetch is connected and waiting on the silent remote.
        await until(() => remote.sockets.length > 0, 20_000, 'git to connect to the remote');
        await new Promise((r) => setTimeout(r, 500));
        const ready = await request(`${server.url}/readyz`);
        expect(ready.status).toBe(503);
        const t0 = performance.now();
        const code = await server.stop(15_000);
        const ms = performance.now() - t0;
        process.stdout.write(`  git-mode server with a silent remote stopped in ${ms.toFixed(0)} ms\n`);
        expect(code, server.log.slice(-1500)).toBe(0);
        expect(ms).toBeLessThan(5000);
      } finally {
        await server.kill9();
        remote.sockets.forEach((s) => s.destroy());
        remote.server.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });

    scenario('`npm start` stopped by its PID stops the server', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'rel-npm-start-'));
      cpSync(join(REPO_ROOT, 'manifests'), join(dir, 'manifests'), { recursive: true });
      const port = await freePort();
      const child = spawn('npm', ['start', '--silent', '--prefix', REPO_ROOT], {
        cwd: dir,
        env: { ...process.env, PORT: String(port), BI_MANIFESTS_DIR: join(dir, 'manifests'), BI_DB_PATH: join(dir, 'data', 'bi.sqlite') },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let log = '';
      child.stdout.on('data', (d: Buffer) => (log += d.toString()));
      child.stderr.on('data', (d: Buffer) => (log += d.toString()));
      const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      const up = async () => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
      try {
        await until(up, 60_000, `npm start to listen on ${port} (log: ${log.slice(-500)})`);
        child.kill('SIGTERM');
        await exited;
        // The server, not only npm, is gone: the port no longer answers.
        await until(async () => !(await up()), 10_000, 'the server behind npm to stop');
        expect(log).toContain('shutting down signal=SIGTERM');
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
      }
    });

    scenario('a deleted remote branch: API writes answer 503 and never recreate it; /readyz says why', async (s) => {
      const ctx = await startServer('deleted-branch', { mode: 'git' });
      try {
        await requireRoute(s, ctx, 'POST', '/v1/sdk/import', ctx.keyHeaders, 'issue 5');
        const bare = ctx.bare as string;
        const first = await request(`${ctx.server.url}/v1/sdk/import`, { body: dashboardPayload('before-delete'), headers: ctx.keyHeaders });
        expect(first.status, first.text).toBe(201);
        const head = git(bare, 'rev-parse', 'refs/heads/main').trim();
        git(bare, 'update-ref', '-d', 'refs/heads/main');
        const res = await request(`${ctx.server.url}/v1/sdk/import`, { body: dashboardPayload('after-delete'), headers: ctx.keyHeaders });
        expect(res.status, res.text).toBe(503);
        expect(errorText(res)).toMatch(/branch main no longer exists/);
        expect(git(bare, 'for-each-ref', 'refs/heads/')).toBe('');
        // The next poll (2 s) notices it too: /readyz names it, nothing is pruned.
        const ready = await until(async () => {
          const r = await request(`${ctx.server.url}/readyz`);
          return (r.json as { gitError?: string }).gitError ? r : undefined;
        }, 15_000, '/readyz to report the missing branch');
        expect((ready.json as { gitError: string }).gitError).toMatch(/^git: .*branch main no longer exists/);
        expect(git(bare, 'for-each-ref', 'refs/heads/')).toBe('');
        const db = new Database(ctx.server.opts.dbPath, { readonly: true });
        expect(db.prepare(`SELECT COUNT(*) AS n FROM facades WHERE name = 'before-delete'`).get()).toEqual({ n: 1 });
        db.close();
        git(bare, 'update-ref', 'refs/heads/main', head);
        const again = await until(async () => {
          const r = await request(`${ctx.server.url}/v1/sdk/import`, { body: dashboardPayload('after-restore'), headers: ctx.keyHeaders });
          return r.status === 201 ? r : undefined;
        }, 15_000, 'writes to work again once the branch is restored');
        expect(again.status).toBe(201);
        expect(git(bare, 'merge-base', '--is-ancestor', head, 'refs/heads/main')).toBe('');
      } finally {
        await ctx.close();
      }
    });
  });
}


