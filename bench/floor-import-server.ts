// The floor for the import benchmark: the least code that does an import's durable work, in a
// process of its own — Fastify parses the JSON body, the product's compiled schema validates it,
// the manifest is rendered to YAML and written atomically (temp file, fsync, rename: the product's
// own writeFileAtomic; then the folder fsync, shared by the writes that arrive together: the
// product's own DirectorySyncs), and ONE SQLite transaction on the product's store schema writes
// the rows an import writes (the facade, one experiment, the ID sequence, the status row, the
// applied version, the audit entry with its chain hash: the product's own appendAudit).
// No authentication, no reconcile queue, no watcher, no logging: what is left is the durable work.
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import Fastify from 'fastify';
import { stringify } from 'yaml';
import { SchemaRegistry } from '../controller/manifest/validator.ts';
import { openStore } from '../controller/store/db.ts';
import { appendAudit } from '../controller/audit/log.ts';
import { DirectorySyncs } from '../controller/writers/dir-sync.ts';
import { writeFileAtomic } from '../controller/writers/directory.ts';

const dir = process.env.FLOOR_DIR;
if (!dir) throw new Error('FLOOR_DIR is required');
const schemas = new SchemaRegistry();
const db = openStore(join(dir, 'data', 'floor.sqlite'));
const root = join(dir, 'manifests');

const bump = db.prepare(
  `INSERT INTO id_sequences (prefix, year, last) VALUES ('F', 2026, 1)
   ON CONFLICT (prefix, year) DO UPDATE SET last = last + 1 RETURNING last`,
);
const insertFacade = db.prepare(
  `INSERT INTO facades (facade_id, name, description, manifest_key, definition, created_by, created_at, updated_at)
   VALUES (@id, @name, @description, @key, @definition, 'bench', @at, @at)`,
);
const insertExperiment = db.prepare(
  `INSERT INTO experiments (experiment_id, facade_id, section, position, top_section, category, charts, created_at, updated_at)
   VALUES (@id, @facadeId, 'main', 0, 0, 0, @charts, @at, @at)`,
);
const upsertStatus = db.prepare(
  `INSERT INTO manifests (key, kind, name, path, hash, spec_hash, phase, resource_ids, actor, last_transition_at, updated_at)
   VALUES (@key, 'Dashboard', @name, @path, @hash, @hash, 'Synced', @ids, 'bench', @at, @at)
   ON CONFLICT (key) DO UPDATE SET hash = @hash, spec_hash = @hash, resource_ids = @ids, updated_at = @at`,
);
const insertApplied = db.prepare(
  `INSERT INTO applied_manifests (key, version, spec_hash, manifest, path, revision, actor, applied_at)
   VALUES (@key, COALESCE((SELECT MAX(version) FROM applied_manifests WHERE key = @key), 0) + 1, @hash, @manifest, @path, NULL, 'bench', @at)`,
);
const syncs = new DirectorySyncs();
const record = db.transaction((spec: Record<string, unknown>, name: string, path: string, hash: string) => {
  const at = new Date().toISOString();
  const n = (bump.get() as { last: number }).last;
  const facadeId = `F2026A${String(n).padStart(5, '0')}`;
  const key = `Dashboard/${name}`;
  insertFacade.run({ id: facadeId, name, description: String(spec.description ?? ''), key, definition: JSON.stringify({ dataSource: spec.dataSource, tags: spec.tags }), at });
  insertExperiment.run({ id: `E2026A${String(n).padStart(5, '0')}`, facadeId, charts: JSON.stringify(spec.charts ?? []), at });
  upsertStatus.run({ key, name, path, hash, ids: JSON.stringify({ facadeId }), at });
  insertApplied.run({ key, hash, manifest: JSON.stringify({ apiVersion: 'bi.controller/v1', kind: 'Dashboard', metadata: { name }, spec }), path, at });
  appendAudit(db, { actor: { type: 'key', id: 'bench' }, action: 'apply', object: { kind: 'Dashboard', id: name }, after: hash, result: 'ok' });
  return facadeId;
});

const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
app.post('/v1/sdk/import', async (req, reply) => {
  const body = req.body as Record<string, unknown>;
  const result = schemas.validate<Record<string, unknown>>('dashboard', body);
  if (!result.ok) return reply.code(400).send({ success: false, problems: result.problems });
  const name = String(body.name);
  const text = stringify({ apiVersion: 'bi.controller/v1', kind: 'Dashboard', metadata: { name }, spec: result.value });
  const path = `dashboards/${name}.yaml`;
  await writeFileAtomic(join(root, path), text);
  await syncs.sync(dirname(join(root, path)));
  const facadeId = record(result.value, name, path, createHash('sha256').update(text).digest('hex'));
  return reply.code(201).send({ success: true, facadeId });
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`listening url=${url}\n`);
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
