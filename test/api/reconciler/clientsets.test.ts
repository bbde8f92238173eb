import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loginAs } from '../../helpers/auth.ts';
import { scrape } from '../../helpers/metrics.ts';
import { makeTestApp, type TestApp } from '../../helpers/runtime.ts';
import { connectionSet, CORE_MODEL, inputs, tenants, tenantSet } from '../../controller/kinds/clientset/fixtures.ts';
import type { ReconcileEvent } from '../../../controller/reconciler/types.ts';

let t: TestApp;
let admin: Record<string, string>;
let member: Record<string, string>;
beforeEach(async () => {
  t = await makeTestApp();
  admin = (await loginAs(t, { role: 'admin' })).headers;
  member = (await loginAs(t, { role: 'member' })).headers;
});
afterEach(async () => t.close());

const read = async (name: string) => (await t.app.inject({ url: `/v1/reconciler/clientsets/${name}`, headers: admin })).json();
const warehouse = (key: string) => (t.rt.db.prepare('SELECT warehouse FROM connections WHERE manifest_key = ?').get(key) as { warehouse: string } | undefined)?.warehouse;

/** A set whose Connection's warehouse is `wh`, in waves: canary first, then the rest `maxUpdate` at a time. */
function waved(wh: string, maxUpdate: number | string, extra: Record<string, unknown> = {}) {
  const set = connectionSet('retail', {
    inputs: [
      { id: 'A', displayName: 'A', tier: 'canary' },
      { id: 'B', displayName: 'B', tier: 'gold' },
      { id: 'C', displayName: 'C', tier: 'gold' },
    ],
    rollout: { waves: [{ selector: { tier: 'canary' }, maxUpdate: '100%' }, { selector: {}, maxUpdate }] },
    ...extra,
  }) as { spec: { resources: { spec: Record<string, unknown> }[] } };
  set.spec.resources[0].spec.warehouse = wh;
  return set;
}

describe('ClientSet API', () => {
  it('GET /v1/reconciler/clientsets and /{name}: per-tenant state, wave, digests, rollout; generated rows in the status read', async () => {
    t.write('sets/retail.yaml', connectionSet('retail', { inputs: [...inputs('ACME', 'BETA'), { id: 'BAD' }] }));
    await t.sync();
    const body = await read('retail');
    const digest = body.clientSet.digest as string;
    expect(body).toEqual({
      success: true,
      clientSet: {
        name: 'retail',
        policy: 'create-update',
        digest,
        inputs: 3,
        present: true,
        tenants: [
          { input: 'ACME', clientId: null, state: 'Synced', digest: expect.any(String), wave: null },
          { input: 'BAD', clientId: null, state: 'Invalid', message: 'spec.resources[0].spec.name: undefined variable: input.displayName, line:1, col:4', digest: null, wave: null },
          { input: 'BETA', clientId: null, state: 'Synced', digest: expect.any(String), wave: null },
        ],
        rollout: { wave: null, paused: false, reason: null },
        history: [{ digest, at: t.clock.now().toISOString(), tenants: 3 }],
      },
    });
    const list = (await t.app.inject({ url: '/v1/reconciler/clientsets', headers: admin })).json();
    expect(list).toEqual({
      success: true,
      clientSets: [{ name: 'retail', policy: 'create-update', digest, inputs: 3, present: true, states: { Synced: 2, Invalid: 1 }, rollout: { wave: null, paused: false, reason: null } }],
    });
    const status = (await t.app.inject({ url: '/v1/reconciler/status', headers: admin })).json();
    const acme = status.items.find((i: { key: string }) => i.key === 'Connection/acme-wh');
    expect(acme).toMatchObject({ phase: 'Synced', generatedBy: 'ClientSet/retail', inputId: 'ACME', path: 'sets/retail.yaml' });
    expect((await t.app.inject({ url: '/v1/reconciler/clientsets/nope', headers: admin })).json()).toEqual({ success: false, error: 'ClientSet nope not found' });
    expect((await t.app.inject({ url: '/v1/reconciler/clientsets', headers: member })).statusCode).toBe(403);
    const metrics = await scrape(t.app);
    const family = metrics.families.find((f) => f.name === 'bi_clientset_tenants');
    expect(family?.metrics).toEqual([
      { labels: { set: 'retail', state: 'Synced' }, value: '2' },
      { labels: { set: 'retail', state: 'Invalid' }, value: '1' },
    ]);
  });

  it('POST /v1/reconciler/clientsets/preview: per-tenant actions with field changes, through the dry run; nothing written', async () => {
    t.write('core-models/retail-core.yaml', CORE_MODEL);
    t.write('sets/retail.yaml', tenantSet('retail', { policy: 'sync', maxDeletePercent: 100, inputs: tenants('ACME', 'BETA', 'GONE') }));
    await t.sync();
    const before = t.rt.db.prepare('SELECT COUNT(*) AS n FROM clients').get();
    const next = tenantSet('retail', {
      policy: 'sync',
      maxDeletePercent: 100,
      inputs: [...tenants('ACME'), { id: 'BETA', displayName: 'Beta Renamed', conn: 'D2026A00002' }, { id: 'NEW1', displayName: 'New', conn: 'D2026A00009' }, { id: 'BAD' }],
    }) as { spec: { resources: { kind: string; spec: Record<string, unknown> }[] } };
    const res = await t.app.inject({ method: 'POST', url: '/v1/reconciler/clientsets/preview', headers: admin, payload: next });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.tenants.map((x: { input: string; action: string }) => [x.input, x.action])).toEqual([
      ['ACME', 'unchanged'],
      ['BAD', 'invalid'],
      ['BETA', 'update'],
      ['GONE', 'delete'],
      ['NEW1', 'create'],
    ]);
    expect(body.tenants.find((x: { input: string }) => x.input === 'BETA').changes).toEqual([
      { path: 'Connection/beta-wh spec.name', from: 'BETA Corp warehouse', to: 'Beta Renamed warehouse' },
      { path: 'Client/BETA spec.clientName', from: 'BETA Corp', to: 'Beta Renamed' },
    ]);
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM clients').get()).toEqual(before);
    // A tenant the real apply would refuse (an unknown core model) is invalid with the apply's reason.
    next.spec.resources[1].spec.coreModelId = 'SM2026A09999';
    const refused = (await t.app.inject({ method: 'POST', url: '/v1/reconciler/clientsets/preview', headers: admin, payload: next })).json();
    const created = refused.tenants.find((x: { input: string }) => x.input === 'NEW1');
    expect(created.action).toBe('invalid');
    expect(created.problems).toEqual(['Client/NEW1: create model: core model SM2026A09999 does not exist']);
    const bad = await t.app.inject({ method: 'POST', url: '/v1/reconciler/clientsets/preview', headers: admin, payload: { kind: 'ClientSet', metadata: { name: 'x' }, spec: { resources: 'no' } } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toContain('spec.resources');
  });

  it('POST /v1/reconciler/clientsets/preview takes the manifest as YAML (application/yaml) too, parsed after the auth guard', async () => {
    t.write('sets/retail.yaml', connectionSet('retail', { inputs: inputs('ACME') }));
    await t.sync();
    const next = connectionSet('retail', { inputs: inputs('ACME', 'NEW1') });
    const asJson = (await t.app.inject({ method: 'POST', url: '/v1/reconciler/clientsets/preview', headers: admin, payload: next })).json();
    const yamlHeaders = { ...admin, 'content-type': 'application/yaml' };
    const res = await t.app.inject({ method: 'POST', url: '/v1/reconciler/clientsets/preview', headers: yamlHeaders, payload: stringify(next) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(asJson);
    expect(res.json().tenants.map((x: { input: string; action: string }) => [x.input, x.action])).toEqual([['ACME', 'unchanged'], ['NEW1', 'create']]);
    // YAML that does not parse: 400 naming the line; a schema problem: 400 naming the field path.
    const broken = await t.app.inject({ method: 'POST', url: '/v1/reconciler/clientsets/preview', headers: yamlHeaders, payload: 'kind: ClientSet\nmetadata: {name: x\n' });
    expect(broken.statusCode).toBe(400);
    expect(broken.json().error).toMatch(/YAML syntax error/);
    const invalid = await t.app.inject({ method: 'POST', url: '/v1/reconciler/clientsets/preview', headers: yamlHeaders, payload: 'kind: ClientSet\nmetadata: {name: x}\nspec: {resources: no}\n' });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().error).toContain('spec.resources');
    // Without a session the body is never parsed: 401, as for JSON; members get 403.
    const anonymous = await t.app.inject({ method: 'POST', url: '/v1/reconciler/clientsets/preview', headers: { 'content-type': 'application/yaml' }, payload: stringify(next) });
    expect(anonymous.statusCode).toBe(401);
    expect((await t.app.inject({ method: 'POST', url: '/v1/reconciler/clientsets/preview', headers: { ...member, 'content-type': 'application/yaml' }, payload: stringify(next) })).statusCode).toBe(403);
    // The document names both media types of the body.
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    expect(Object.keys(doc.paths['/v1/reconciler/clientsets/preview'].post.requestBody.content)).toEqual(['application/json', 'application/yaml']);
  });

  it('waves: a wave with maxUpdate 0 waits for approval; a tenant not yet reached keeps its last applied version', async () => {
    t.write('sets/retail.yaml', waved('WH1', 0));
    await t.sync();
    expect(['A', 'B', 'C'].map((x) => warehouse(`Connection/${x.toLowerCase()}-wh`))).toEqual(['WH1', 'WH1', 'WH1']);
    t.write('sets/retail.yaml', waved('WH2', 0));
    await t.sync();
    expect(['A', 'B', 'C'].map((x) => warehouse(`Connection/${x.toLowerCase()}-wh`))).toEqual(['WH2', 'WH1', 'WH1']);
    const waiting = await read('retail');
    expect(waiting.clientSet.rollout).toEqual({ wave: 2, paused: false, reason: 'wave 2 waits for approval' });
    expect(waiting.clientSet.tenants.map((x: { input: string; state: string; wave: number }) => [x.input, x.state, x.wave])).toEqual([
      ['A', 'Synced', 1],
      ['B', 'Pending', 2],
      ['C', 'Pending', 2],
    ]);
    const wrong = await t.app.inject({ method: 'POST', url: '/v1/reconciler/clientsets/retail/approve', headers: admin, payload: { digest: 'nope' } });
    expect(wrong.statusCode).toBe(409);
    const ok = await t.app.inject({ method: 'POST', url: '/v1/reconciler/clientsets/retail/approve', headers: admin, payload: { digest: waiting.clientSet.digest } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().clientSet.rollout).toEqual({ wave: null, paused: false, reason: null });
    expect(['A', 'B', 'C'].map((x) => warehouse(`Connection/${x.toLowerCase()}-wh`))).toEqual(['WH2', 'WH2', 'WH2']);
    expect(ok.json().clientSet.history).toHaveLength(2);
  });

  it('waves: a failed tenant of the current wave pauses the rollout (a notification event), approve releases it', async () => {
    t.write('core-models/retail-core.yaml', CORE_MODEL);
    const rows = [
      { id: 'A', displayName: 'A', conn: 'D2026A00001', tier: 'canary', core: 'SM2026A09999' },
      { id: 'B', displayName: 'B', conn: 'D2026A00002', tier: 'gold', core: 'SM2026A00001' },
    ];
    const set = (core: string) => {
      const s = tenantSet('retail', { inputs: rows, rollout: { waves: [{ selector: { tier: 'canary' }, maxUpdate: 1 }, { selector: {}, maxUpdate: '50%' }] } }) as {
        spec: { resources: { kind: string; spec: Record<string, unknown> }[] };
      };
      s.spec.resources[1].spec.coreModelId = core;
      s.spec.resources[1].spec.description = core.startsWith('{{') ? 'v2' : 'v1';
      return s;
    };
    t.write('sets/retail.yaml', set('SM2026A00001'));
    await t.sync();
    const events: ReconcileEvent[] = [];
    t.rt.reconciler.on('event', (e) => events.push(e));
    t.write('sets/retail.yaml', set('{{ input.core }}'));
    await t.sync();
    const paused = await read('retail');
    expect(paused.clientSet.rollout).toEqual({ wave: 1, paused: true, reason: 'wave 1 paused: A failed to apply (fix it, or approve)' });
    expect(paused.clientSet.tenants.map((x: { input: string; state: string }) => [x.input, x.state])).toEqual([
      ['A', 'Failed'],
      ['B', 'Pending'],
    ]);
    expect(events.filter((e) => e.type === 'rollout-paused').map((e) => e.key)).toEqual(['ClientSet/retail']);
    const ok = await t.app.inject({ method: 'POST', url: '/v1/reconciler/clientsets/retail/approve', headers: admin, payload: {} });
    expect(ok.json().clientSet.tenants.map((x: { input: string; state: string }) => [x.input, x.state])).toEqual([
      ['A', 'Failed'],
      ['B', 'Synced'],
    ]);
  });
});
