// ClientSet at scale: one set of N tenants (a Connection and a Client each, from a CSV catalogue).
// The controller runs in a child process (its own RSS): preview, first apply, no-op resync.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { round } from '../lib/load.ts';
import { coreModelManifest, manifest } from '../lib/payloads.ts';
import type { Report } from '../lib/report.ts';
import { scratch } from '../lib/setup.ts';

const BENCH = 'clientset';

/** The set: a Connection and a Client per input of catalog/tenants.csv. */
export function clientSetFiles(n: number): Record<string, string> {
  const rows = Array.from({ length: n }, (_, i) => `T${String(i).padStart(5, '0')},Tenant ${i},${i % 10 === 0 ? 'canary' : 'gold'},D2027A${String(i + 1).padStart(5, '0')}`);
  const set = manifest('ClientSet', 'fleet', {
    inputsFrom: [{ path: 'catalog/tenants.csv' }],
    resources: [
      {
        kind: 'Connection',
        metadata: { name: '{{ input.id | downcase }}-wh' },
        spec: {
          connectionId: '{{ input.conn }}',
          name: '{{ input.displayName }} warehouse',
          vendor: 'SNOWFLAKE',
          accountUrl: 'https://{{ input.id | downcase }}.snowflakecomputing.com',
          warehouse: 'WH',
          database: '{{ input.id }}',
          schema: 'ANALYTICS',
          username: 'svc_bi',
          passwordEnv: 'BI_CONN_{{ input.id }}',
        },
      },
      {
        kind: 'Client',
        metadata: { name: '{{ input.id }}' },
        spec: { clientId: '{{ input.id }}', clientName: '{{ input.displayName }}', connectionId: '{{ input.conn }}', coreModelId: 'SM2026A00001', vdm: [{ name: 'Sales', selectedColumns: ['region', 'revenue'] }] },
      },
    ],
    maxDeletePercent: 10,
    rollout: { waves: [{ selector: { tier: 'canary' }, maxUpdate: '100%' }, { selector: {}, maxUpdate: '25%' }] },
  });
  return {
    'core-models/retail-core.yaml': stringify(coreModelManifest()),
    'catalog/tenants.csv': `id,displayName,tier,conn\n${rows.join('\n')}\n`,
    'sets/fleet.yaml': stringify(set),
  };
}

export async function clientSetBench(report: Report, opts: { tenants: number; base: string }): Promise<void> {
  const dir = scratch('clientset', opts.base);
  const manifests = join(dir, 'manifests');
  for (const [rel, text] of Object.entries(clientSetFiles(opts.tenants))) {
    mkdirSync(join(manifests, rel, '..'), { recursive: true });
    writeFileSync(join(manifests, rel), text);
  }
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  const line = out.trim().split('\n').at(-1) ?? '';
  if (code !== 0 || !line.startsWith('{')) {
    report.skip(BENCH, `ClientSet of ${opts.tenants} tenants`, `child failed (${code}): ${out.slice(-200)}`);
    return;
  }
  const r = JSON.parse(line) as { previewS: number; firstApplyS: number; noopS: number; rssMb: number; synced: number; failed: number };
  const n = opts.tenants;
  report.add({ bench: BENCH, figure: `preview of a ClientSet of ${n} new tenants (dry run of ${2 * n} objects)`, value: round(r.previewS, 2), unit: 's', goal: '<= 10' });
  report.add({ bench: BENCH, figure: `first apply of ${n} tenants (${2 * n} objects)`, value: round(r.firstApplyS, 2), unit: 's', goal: '<= 60', detail: { synced: r.synced, failed: r.failed } });
  report.add({ bench: BENCH, figure: `no-op resync of the ${n} tenants`, value: round(r.noopS, 2), unit: 's', goal: '<= 5' });
  report.add({ bench: BENCH, figure: `peak RSS of the controller process (${n} tenants)`, value: round(r.rssMb, 0), unit: 'MB', goal: '<= 250' });
}

/** The child: a runtime on the folder, measured step by step; one JSON line on stdout. */
async function child(dir: string): Promise<void> {
  const { loadConfig } = await import('../../controller/config.ts');
  const { createRuntime } = await import('../../controller/runtime.ts');
  const { DirectorySource } = await import('../../controller/sources/directory.ts');
  const { parseManifest } = await import('../../controller/manifest/loader.ts');
  const { previewClientSet } = await import('../../controller/kinds/clientset/preview.ts');
  const manifests = join(dir, 'manifests');
  const source = new DirectorySource({ root: manifests, watch: false });
  const config = loadConfig({}, { manifestsDir: manifests, dbPath: join(dir, 'data', 'bi.sqlite'), dataDir: join(dir, 'data') });
  const rt = createRuntime({ config, source });
  // The prerequisites only: the set is previewed before it is applied.
  const file = source.read('sets/fleet.yaml');
  if (!file || !('bytes' in file)) throw new Error('no set file');
  const parsed = parseManifest('sets/fleet.yaml', file.bytes, rt.schemas);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  // The store has the prerequisites only (the set's file is put back for the first apply).
  const { renameSync } = await import('node:fs');
  renameSync(join(manifests, 'sets/fleet.yaml'), join(dir, 'fleet.yaml'));
  await rt.start();
  renameSync(join(dir, 'fleet.yaml'), join(manifests, 'sets/fleet.yaml'));
  const t0 = performance.now();
  const preview = previewClientSet(parsed.manifest as never, {
    store: rt.clientSets.store,
    schemas: rt.schemas,
    read: (p) => source.read(p),
    fileOf: (k) => rt.reconciler.fileOf(k),
    dryRun: (o) => rt.reconciler.dryRun(o),
  });
  const previewS = (performance.now() - t0) / 1000;
  if (preview.tenants.some((x) => x.action !== 'create')) throw new Error(`preview: ${JSON.stringify(preview.tenants.find((x) => x.action !== 'create'))}`);
  await rt.stop();
  const { rmSync } = await import('node:fs');
  rmSync(join(dir, 'data'), { recursive: true, force: true });
  const rt2 = createRuntime({ config, source: new DirectorySource({ root: manifests, watch: false }) });
  const t1 = performance.now();
  await rt2.start();
  await rt2.reconciler.idle();
  const firstApplyS = (performance.now() - t1) / 1000;
  const rows = rt2.db.prepare("SELECT phase, COUNT(*) AS n FROM manifests WHERE generated_by IS NOT NULL GROUP BY phase").all() as { phase: string; n: number }[];
  const t2 = performance.now();
  await rt2.syncNow();
  const noopS = (performance.now() - t2) / 1000;
  await rt2.stop();
  const rssMb = process.resourceUsage().maxRSS / 1024;
  const count = (p: string) => rows.find((r) => r.phase === p)?.n ?? 0;
  process.stdout.write(`${JSON.stringify({ previewS, firstApplyS, noopS, rssMb, synced: count('Synced'), failed: count('Failed') + count('Invalid') })}\n`);
}

if (process.argv[2] === '--child') await child(process.argv[3] as string);
