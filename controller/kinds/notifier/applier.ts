import { isIP } from 'node:net';
import type { Applier, ApplyContext, Manifest, Problem, PruneContext } from '../../types.ts';
import type { Notifier as NotifierSpec } from '../../generated/schema-types.ts';

/** 169.254.0.0/16: cloud metadata endpoints; a notification never goes there. */
export function isLinkLocal(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (isIP(h) === 4) return h.startsWith('169.254.');
  if (isIP(h) === 6) return /^fe[89ab]/.test(h) || /^::ffff:169\.254\./.test(h);
  return false;
}

/** Notifier: where notifications go. Stored as configuration; the dispatcher reads it per event. */
export const notifierApplier: Applier<NotifierSpec> = {
  kind: 'Notifier',
  order: 0,
  lint(manifest: Manifest<NotifierSpec>): Problem[] {
    const spec = manifest.spec;
    const problems: Problem[] = [];
    let url: URL | undefined;
    try {
      url = new URL(spec.url);
    } catch {
      problems.push({ path: 'spec.url', message: 'spec.url must be an http:// or https:// URL' });
    }
    if (url && isLinkLocal(url.hostname)) problems.push({ path: 'spec.url', message: 'spec.url may not be a link-local address (169.254.0.0/16)' });
    if (url && (url.username || url.password) && spec.type === 'webhook') {
      problems.push({ path: 'spec.url', message: 'spec.url may not carry credentials: sign with secretEnv' });
    }
    if (spec.secretEnv && spec.type !== 'webhook') {
      problems.push({ path: 'spec.secretEnv', message: `spec.secretEnv signs webhook bodies only; a ${spec.type} URL is its own secret` });
    }
    return problems;
  },
  check(_db, manifest): Problem[] {
    const env = manifest.spec.secretEnv;
    return env && !process.env[env] ? [{ path: 'spec.secretEnv', message: `spec.secretEnv names the environment variable ${env}, which is not set` }] : [];
  },
  apply(ctx: ApplyContext<NotifierSpec>) {
    const { db, manifest, now } = ctx;
    const spec = manifest.spec;
    ctx.step('notifier');
    const json = (v: unknown[] | undefined) => (v ? JSON.stringify(v) : null);
    db.prepare(
      `INSERT INTO notifiers (name, manifest_key, type, url, secret_env, events, kinds, clients, updated_at)
       VALUES (@name, @key, @type, @url, @secretEnv, @events, @kinds, @clients, @at)
       ON CONFLICT (name) DO UPDATE SET manifest_key = @key, type = @type, url = @url, secret_env = @secretEnv,
         events = @events, kinds = @kinds, clients = @clients, updated_at = @at`,
    ).run({
      name: manifest.metadata.name,
      key: ctx.key,
      type: spec.type,
      url: spec.url,
      secretEnv: spec.secretEnv ?? null,
      events: json(spec.events),
      kinds: json(spec.kinds),
      clients: json(spec.clients),
      at: now.toISOString(),
    });
    return { notifier: manifest.metadata.name };
  },
  prune(ctx: PruneContext) {
    ctx.db.prepare('DELETE FROM notifiers WHERE name = ?').run(ctx.name);
  },
};
