import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GitRepo } from '../../../controller/git/repo.ts';
import { parseScrape, value } from '../../helpers/metrics.ts';
import { startReceiver, type Receiver } from '../../helpers/receiver.ts';
import { coreModel, makeGitRuntime, manifest, Remote } from './harness.ts';

describe('git operations observed: metrics and notifications', () => {
  let remote: Remote;
  let rx: Receiver;
  beforeEach(async () => {
    remote = new Remote().init();
    rx = await startReceiver();
  });
  afterEach(async () => {
    remote.dispose();
    await rx.close();
  });

  it('times every fetch, counts failures, and announces a failing remote once per failure streak', async () => {
    remote.write('manifests/core-models/retail.yaml', coreModel('retail'));
    remote.write('manifests/notifiers/ops.yaml', manifest('Notifier', 'ops', { type: 'webhook', url: `${rx.url}/ops`, events: ['git.failed'] }));
    remote.push('first');
    const t = await makeGitRuntime({ url: remote.url });
    try {
      const moved = `${remote.bare}.gone`;
      renameSync(remote.bare, moved);
      await t.poll();
      await t.poll();
      await t.rt.notifications.idle();
      let m = parseScrape((await t.rt.metrics.scrape()).body);
      expect(value(m, 'bi_git_operation_failures_total', { operation: 'fetch' })).toBe(2);
      expect(value(m, 'bi_git_operation_duration_seconds', { operation: 'fetch' })).toBeGreaterThanOrEqual(3);
      expect(rx.received.map((r) => [r.body.event, r.body.kind, r.body.name])).toEqual([['git.failed', 'Git', 'main']]);
      expect(String(rx.received[0].body.message)).toMatch(/^git fetch of main failed: /);

      // Back, then gone again: a new streak, a new message.
      renameSync(moved, remote.bare);
      await t.poll();
      renameSync(remote.bare, moved);
      await t.poll();
      await t.rt.notifications.idle();
      m = parseScrape((await t.rt.metrics.scrape()).body);
      expect(value(m, 'bi_git_operation_failures_total', { operation: 'fetch' })).toBe(3);
      expect(rx.received).toHaveLength(2);
      renameSync(moved, remote.bare);
    } finally {
      await t.stop();
      rmSync(t.dir, { recursive: true, force: true });
    }
  });

  it('GitRepo reports each push with its duration and error', async () => {
    remote.write('a.txt', 'a');
    remote.push('first');
    remote.refusePushes();
    const seen: [string, boolean][] = [];
    const dir = mkdtempSync(join(tmpdir(), 'bi-observe-'));
    const repo = new GitRepo({ dir, url: remote.url, branch: 'main', committer: { name: 'c', email: 'c@example.com' }, observe: (op, s, err) => seen.push([op, s >= 0 && err !== undefined]) });
    try {
      await repo.ensure();
      await repo.resetTo(await repo.fetch());
      writeFileSync(join(dir, 'b.txt'), 'b');
      await repo.commit(['b.txt'], 'b', { name: 'a', email: 'a@example.com' });
      await expect(repo.push()).rejects.toThrow(/pushes are frozen|pre-receive/);
      expect(seen).toEqual([
        ['fetch', false],
        ['push', true],
      ]);
      const throwing = new GitRepo({ dir, url: remote.url, branch: 'main', committer: { name: 'c', email: 'c@example.com' }, observe: () => { throw new Error('observer bug'); } });
      expect(await throwing.fetch()).toBe(remote.remoteHead());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
