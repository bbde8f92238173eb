import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { startServer, type Server } from '../../api/server.ts';
import { loadConfig } from '../../controller/config.ts';
import { testConnection } from '../../controller/connections/test-connection.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const ARTIFACTS = join(ROOT, 'test', 'artifacts');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
  '--disable-dev-shm-usage',
];

export const ADMIN = { username: 'admin', password: 'admin-password-e2e' };
export const MEMBER = { username: 'mia', password: 'member-password-e2e' };

/** PostgreSQL of `.ci/run` (trust auth): the first of these users that can connect. */
export const PG = { host: process.env.PGHOST ?? '127.0.0.1', port: Number(process.env.PGPORT ?? 5432), database: process.env.PGDATABASE ?? 'test', schema: 'public' };

export async function findPostgresUser(): Promise<string> {
  const candidates = [process.env.PGUSER, 'postgres', 'root'].filter((u): u is string => Boolean(u));
  const failures: string[] = [];
  for (const username of candidates) {
    const r = await testConnection({ vendor: 'POSTGRESQL', ...PG, username, password: process.env.PGPASSWORD ?? '' }, { timeoutMs: 5000 });
    if (r.ok) return username;
    failures.push(`${username}: ${r.message}`);
  }
  throw new Error(`e2e needs PostgreSQL at ${PG.host}:${PG.port}/${PG.database} (trust auth): ${failures.join('; ')}`);
}

/** Calls the API from a page with its signed-in session, the way the console does (`{userId}` in the path: the session's user). */
export function pageApi(p: Page, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  return p.evaluate(
    async ({ method, path, body }) => {
      const s = JSON.parse(localStorage.getItem('bi-controller.session') ?? '{}') as { userId: string; csrfToken: string };
      const r = await fetch(path.replace('{userId}', s.userId), {
        method,
        headers: { CTN: s.csrfToken, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: r.status, body: (await r.json()) as Record<string, unknown> };
    },
    { method, path, body },
  );
}

/** Signs `who` in through the login form and waits for the page they land on (`landing`, a selector). */
export async function signIn(p: Page, who: { username: string; password: string }, landing = '#clients-h'): Promise<void> {
  await p.goto('/ui/');
  await p.waitForSelector('form.login');
  await p.fill('input[name=username]', who.username);
  await p.fill('input[name=password]', who.password);
  await p.keyboard.press('Enter');
  await p.waitForSelector(landing);
}

/** axe finds nothing at 1280 and 390 px (screenshots of both in test/artifacts/), and at 390 px nothing is wider than the screen. */
export async function expectClean(h: Harness, p: Page, name: string): Promise<void> {
  expect(await h.check(p, name)).toEqual([]);
  const original = p.viewportSize() ?? { width: 1280, height: 860 };
  await p.setViewportSize({ width: 390, height: 844 });
  const width = await p.evaluate(() => new Promise<number>((r) => requestAnimationFrame(() => r(document.documentElement.scrollWidth))));
  await p.setViewportSize(original);
  expect(width, `${name}: page width at 390 px`).toBeLessThanOrEqual(390);
}

export interface AxeViolation {
  id: string;
  impact: string | null | undefined;
  help: string;
  width: number;
  targets: string[];
}

export interface Harness {
  server: Server;
  url: string;
  dir: string;
  manifests: string;
  browser: Browser;
  newPage(opts?: { width?: number; height?: number }): Promise<{ context: BrowserContext; page: Page }>;
  /** Requests any page made to another origin (must stay empty: no CDN, no leaks). */
  foreignRequests: string[];
  shot(page: Page, name: string): Promise<string>;
  /**
   * The page as it is now, at 1280 px and 390 px wide: a full-page screenshot of each in
   * `test/artifacts/<name>-1280.png` / `-390.png`, and axe (WCAG 2.1 A/AA) at each width.
   * Resolves the violations (empty when the page is clean); the viewport is restored after.
   */
  check(page: Page, name: string): Promise<AxeViolation[]>;
  close(): Promise<void>;
}

/** The real server in-process (temp manifests with the example CoreModel, port 0) and headless Chromium. */
export async function startHarness(): Promise<Harness> {
  if (!existsSync(CHROMIUM)) throw new Error(`e2e needs Chromium at ${CHROMIUM} (apt-get install -y chromium)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'bi-e2e-'));
  const manifests = join(dir, 'manifests');
  mkdirSync(join(manifests, 'core-models'), { recursive: true });
  copyFileSync(join(ROOT, 'manifests', 'core-models', 'retail-core.yaml'), join(manifests, 'core-models', 'retail-core.yaml'));
  const config = loadConfig(
    {},
    {
      host: '127.0.0.1',
      port: 0,
      manifestsDir: manifests,
      dbPath: join(dir, 'data', 'bi.sqlite'),
      dataDir: join(dir, 'data'),
      logLevel: process.env.E2E_LOG_LEVEL ?? 'silent',
      adminUser: ADMIN.username,
      adminPassword: ADMIN.password,
      secretKey: '5e'.repeat(32),
    },
  );
  const server = await startServer(config);
  await server.runtime.auth.users.create({ username: MEMBER.username, password: MEMBER.password, role: 'member' });
  for (let i = 0; i < 100 && !server.runtime.reconciler.ready; i++) await new Promise((r) => setTimeout(r, 50));
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  const contexts: BrowserContext[] = [];
  const foreignRequests: string[] = [];
  return {
    foreignRequests,
    server,
    url: server.url,
    dir,
    manifests,
    browser,
    async newPage(opts = {}) {
      const context = await browser.newContext({ viewport: { width: opts.width ?? 1280, height: opts.height ?? 860 }, acceptDownloads: true, baseURL: server.url });
      contexts.push(context);
      const page = await context.newPage();
      page.on('request', (req) => {
        const u = req.url();
        if (!u.startsWith(server.url) && !u.startsWith('data:') && !u.startsWith('blob:')) foreignRequests.push(u);
      });
      // Any request to another origin would mean a CDN or a leak: fail loudly.
      await page.route(/^(?!https?:\/\/127\.0\.0\.1)/, (route) => route.abort());
      return { context, page };
    },
    async shot(page, name) {
      const path = join(ARTIFACTS, `${name}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
    async check(page, name) {
      const original = page.viewportSize() ?? { width: 1280, height: 860 };
      const violations: AxeViolation[] = [];
      try {
        for (const width of [1280, 390]) {
          await page.setViewportSize({ width, height: width === 390 ? 844 : 860 });
          // Let layout and any transition settle before reading the page.
          await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
          await page.screenshot({ path: join(ARTIFACTS, `${name}-${width}.png`), fullPage: true });
          const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
          for (const v of result.violations) {
            violations.push({ id: v.id, impact: v.impact, help: v.help, width, targets: v.nodes.map((n) => n.target.join(' ')) });
          }
        }
      } finally {
        await page.setViewportSize(original);
      }
      return violations;
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => {});
      await browser.close().catch(() => {});
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
