import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait.ts';

const BIN = join(process.cwd(), 'controller', 'cli', 'bictl.mjs');

describe('bictl serve (a real process, started as the README says)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bi-serve-'));
    cpSync(join(process.cwd(), 'manifests'), join(dir, 'manifests'), { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('serves /healthz and /readyz with the example manifests, and stops cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, [BIN, 'serve'], {
      cwd: dir,
      env: { ...process.env, PORT: '0', BI_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const url = await waitFor(() => /listening url=(http:\/\/\S+)/.exec(out)?.[1], { timeoutMs: 20_000, what: 'listening' });
      expect((await (await fetch(`${url}/healthz`)).json())).toEqual({ status: 'ok' });
      await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, { timeoutMs: 20_000, what: 'ready' });
      const lines = out.trim().split('\n');
      expect(lines.every((l) => /^\d{4}-\d\d-\d\dT[\d:.]+Z (INFO|WARN|ERROR|DEBUG)\s/.test(l))).toBe(true);
      expect(out).toContain('key=CoreModel/retail-core phase=Synced');
      expect(existsSync(join(dir, 'data', 'bi.sqlite'))).toBe(true);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(out).toContain('shutting down signal=SIGTERM');
  }, 60_000);
});
