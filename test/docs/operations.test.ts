import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../controller/paths.ts';

const examples = join(ROOT, 'docs', 'examples');
const configVars = new Set([...readFileSync(join(ROOT, 'controller', 'config.ts'), 'utf8').matchAll(/\benv\.([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]));
const hasSystemdAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;

/** `[Section]` → key → values, of a systemd unit. */
function unit(text: string): Map<string, Map<string, string[]>> {
  const out = new Map<string, Map<string, string[]>>();
  let section: Map<string, string[]> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const head = /^\[(\w+)\]$/.exec(line);
    if (head) out.set(head[1], (section = new Map()));
    else {
      const [key, ...rest] = line.split('=');
      if (!section || !rest.length) throw new Error(`not a unit line: ${line}`);
      section.set(key, [...(section.get(key) ?? []), rest.join('=')]);
    }
  }
  return out;
}

describe('docs/examples', () => {
  const service = readFileSync(join(examples, 'bi-controller.service'), 'utf8');

  it('the systemd unit parses, serves, and sets only variables the controller reads', () => {
    const u = unit(service);
    expect([...u.keys()]).toEqual(['Unit', 'Service', 'Install']);
    const s = u.get('Service') as Map<string, string[]>;
    expect(s.get('ExecStart')?.[0]).toMatch(/^\/usr\/bin\/node .*controller\/cli\/bictl\.mjs serve$/);
    expect(s.get('UMask')).toEqual(['0077']);
    const vars = (s.get('Environment') ?? []).map((e) => e.split('=')[0]).filter((v) => v !== 'NODE_ENV');
    expect(vars.filter((v) => !configVars.has(v))).toEqual([]);
  });

  it.skipIf(!hasSystemdAnalyze)('systemd-analyze verify accepts the unit', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bi-unit-'));
    try {
      copyFileSync(join(examples, 'bi-controller.service'), join(dir, 'bi-controller.service'));
      const r = spawnSync('systemd-analyze', ['verify', join(dir, 'bi-controller.service')], { encoding: 'utf8', timeout: 60_000 });
      expect({ status: r.status, stderr: r.stderr.trim() }).toEqual({ status: 0, stderr: '' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the nginx site parses (balanced blocks, every directive ended) and proxies to the unit\'s port, SSE unbuffered', () => {
    const conf = readFileSync(join(examples, 'nginx.conf'), 'utf8').replace(/#.*$/gm, '');
    let depth = 0;
    let statement = '';
    const directives: string[] = [];
    for (const ch of conf) {
      if (ch === '{') {
        depth++;
        statement = '';
      } else if (ch === '}') {
        expect(statement.trim(), 'a directive without ;').toBe('');
        depth--;
        expect(depth).toBeGreaterThanOrEqual(0);
      } else if (ch === ';') {
        directives.push(statement.trim().replace(/\s+/g, ' '));
        statement = '';
      } else statement += ch;
    }
    expect(depth).toBe(0);
    expect(statement.trim()).toBe('');
    const port = /Environment=PORT=(\d+)/.exec(service)?.[1];
    expect(directives.filter((d) => d.startsWith('proxy_pass')).every((d) => d === `proxy_pass http://127.0.0.1:${port}`)).toBe(true);
    expect(directives).toContain('proxy_buffering off');
    expect(directives).toContain('proxy_set_header X-Forwarded-Proto $scheme');
  });

  it('docs/operations.md covers deploy, backup, restore, upgrade and monitoring with the tested commands', () => {
    const ops = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
    for (const heading of ['## Deploy', '## Back up', '## Restore', '## Upgrade', '## Monitor']) expect(ops).toContain(heading);
    expect(ops).toContain('bictl backup');
    expect(ops).toContain('docs/examples/bi-controller.service');
    expect(ops).toContain('docs/examples/nginx.conf');
  });
});
