import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isLinkLocal } from '../../../../controller/kinds/notifier/applier.ts';
import { ROOT } from '../../../../controller/paths.ts';
import { runCli } from '../../../helpers/cli.ts';
import { makeTestRuntime, manifest, type TestRuntime } from '../../../helpers/runtime.ts';

/** The documentation's Notifier example (docs/observability.md), as a user would copy it. */
function readmeExample(): string {
  const readme = readFileSync(join(ROOT, 'docs', 'observability.md'), 'utf8');
  const block = /```yaml\n(apiVersion: bi\.controller\/v1\nkind: Notifier\n[\s\S]*?)```/.exec(readme);
  if (!block) throw new Error('docs/observability.md has no Notifier example');
  return block[1];
}

describe('Notifier', () => {
  let dir: string | undefined;
  let t: TestRuntime | undefined;
  afterEach(async () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    await t?.close();
    dir = undefined;
    t = undefined;
  });

  it('the README example passes bictl validate; a bad one is refused with its field paths', async () => {
    dir = mkdtempSync(join(tmpdir(), 'bi-notifier-'));
    writeFileSync(join(dir, 'ops.yaml'), readmeExample());
    const ok = await runCli(['validate', dir]);
    expect(ok.err).toBe('');
    expect(ok.code).toBe(0);
    writeFileSync(
      join(dir, 'bad.yaml'),
      'apiVersion: bi.controller/v1\nkind: Notifier\nmetadata: {name: bad}\nspec:\n  type: slack\n  url: http://169.254.169.254/\n  secretEnv: X\n  events: [object.exploded]\n  token: abc\n',
    );
    const bad = await runCli(['validate', dir]);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('spec.events[0] must be one of object.failed');
    expect(bad.err).toContain('plain-text secrets are refused: use secretEnv');
    writeFileSync(join(dir, 'bad.yaml'), 'apiVersion: bi.controller/v1\nkind: Notifier\nmetadata: {name: bad}\nspec:\n  type: slack\n  url: http://169.254.169.254/\n  secretEnv: X\n');
    const lint = await runCli(['validate', dir]);
    expect(lint.code).toBe(1);
    expect(lint.err).toContain('spec.url may not be a link-local address (169.254.0.0/16)');
    expect(lint.err).toContain('spec.secretEnv signs webhook bodies only; a slack URL is its own secret');
  });

  it('applies into the notifiers table, updates in place, fails clearly without its secret, and prunes', async () => {
    t = await makeTestRuntime();
    t.write('n.yaml', manifest('Notifier', 'ops', { type: 'webhook', url: 'https://hooks.example.com/a', events: ['object.failed'] }));
    await t.sync();
    expect(t.rt.notifications.store.all()).toEqual([{ name: 'ops', type: 'webhook', url: 'https://hooks.example.com/a', events: ['object.failed'] }]);
    t.write('n.yaml', manifest('Notifier', 'ops', { type: 'teams', url: 'https://hooks.example.com/b', kinds: ['Client'], clients: ['ACME'] }));
    await t.sync();
    expect(t.rt.notifications.store.all()).toEqual([{ name: 'ops', type: 'teams', url: 'https://hooks.example.com/b', kinds: ['Client'], clients: ['ACME'] }]);
    t.write('s.yaml', manifest('Notifier', 'signed', { type: 'webhook', url: 'https://hooks.example.com/c', secretEnv: 'BI_TEST_UNSET_SECRET' }));
    await t.sync();
    expect(t.rt.reconciler.status.get('Notifier/signed')).toMatchObject({ phase: 'Failed', reason: 'validate', message: 'validate: spec.secretEnv names the environment variable BI_TEST_UNSET_SECRET, which is not set' });
    t.remove('n.yaml');
    await t.sync();
    expect(t.rt.notifications.store.all()).toEqual([]);
  });

  it('recognizes link-local addresses (v4, v6 and v4-mapped)', () => {
    expect(['169.254.169.254', '[fe80::1]', '::ffff:169.254.0.1'].map(isLinkLocal)).toEqual([true, true, true]);
    expect(['127.0.0.1', '10.0.0.1', 'hooks.example.com', '169.255.0.1'].map(isLinkLocal)).toEqual([false, false, false, false]);
  });
});
