import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { UnavailableError } from '../../controller/errors.ts';
import { resolveSteps } from '../../controller/kinds/pipeline/normalize.ts';
import { nextRunAt } from '../../controller/kinds/pipeline/schedule.ts';
import { readPipeline } from '../../controller/kinds/pipeline/store.ts';
import { validatePipelinePayload } from '../../controller/kinds/pipeline/validate.ts';
import type { Manifest } from '../../controller/types.ts';
import { slugify } from '../../controller/writers/paths.ts';
import { requireApiKey, requireSession } from '../auth/guards.ts';
import { clientMessage, statusOf } from '../errors.ts';

const DIR = 'pipelines';
const NAME_LOCK = 'Pipeline/<import names>';

/**
 * Manifest names chosen for imports still being written and reconciled: two imports of the same
 * name at once must not pick the same file. Chosen under the runtime's lock, held in here until
 * the import is done.
 */
class NameReservations {
  readonly #taken = new Set<string>();

  async reserve(app: FastifyInstance, base: string): Promise<string> {
    return app.runtime.locks.run(NAME_LOCK, async () => {
      for (let n = 1; ; n++) {
        const name = n === 1 ? base : `${base}-${n}`;
        if (!this.#taken.has(name) && !(await inUse(app, name))) {
          this.#taken.add(name);
          return name;
        }
      }
    });
  }

  release(name: string): void {
    this.#taken.delete(name);
  }
}

/** A name is in use when its file exists or a manifest anywhere defines `Pipeline/<name>`. */
async function inUse(app: FastifyInstance, name: string): Promise<boolean> {
  const row = app.runtime.reconciler.status.get(`Pipeline/${name}`);
  if (row && row.phase !== 'Pruned') return true;
  return app.runtime.writer.exists(`${DIR}/${name}.yaml`);
}

/** Base of the manifest name: the slug of the display name, short enough for a `-<n>` suffix. */
function baseName(displayName: string): string {
  return slugify(displayName, 'pipeline').slice(0, 100);
}

function isDryRun(req: FastifyRequest): boolean {
  const v = (req.query as Record<string, unknown> | undefined)?.dryRun;
  return v === 'true' || v === '1';
}

/** Pipeline import (spec 4.4, its session variant) and the stored pipeline (DESIGN.md). */
export default async function pipelineRoutes(app: FastifyInstance): Promise<void> {
  const names = new NameReservations();

  // Pipeline endpoints answer failures as {success:false, message} (spec 4.4), not `error`.
  app.setErrorHandler((err: FastifyError, req, reply) => {
    const status = statusOf(err);
    if (status >= 500 && !(err instanceof UnavailableError)) {
      req.log.error({ err: err.message, stack: err.stack }, 'request failed');
      return reply.status(500).send({ success: false, message: 'Internal server error' });
    }
    return reply.status(status).send({ success: false, message: err.code?.startsWith('FST_') ? clientMessage(err) : err.message });
  });

  async function importPipeline(req: FastifyRequest, reply: FastifyReply) {
    const principal = req.principal;
    if (!principal) return reply.status(401).send({ error: 'API key required' });
    const checked = validatePipelinePayload(app.runtime.schemas, req.body);
    if (!checked.ok) return reply.status(400).send({ success: false, message: checked.message });
    const spec = checked.spec;

    if (isDryRun(req)) {
      const now = app.runtime.clock();
      const next = nextRunAt(spec.schedule, now, now);
      return reply.status(200).send({
        success: true,
        dryRun: true,
        message: 'Pipeline is valid; nothing was written',
        data: {
          pipelineId: null,
          name: spec.name,
          status: 'draft',
          steps: resolveSteps(spec).map((s) => ({ id: null, type: s.type, name: s.name, status: 'configured', config: s.config })),
          nextRunAt: next ? next.toISOString() : null,
        },
      });
    }

    const name = await names.reserve(app, baseName(spec.name));
    try {
      const relPath = `${DIR}/${name}.yaml`;
      const write = { actor: { userId: principal.userId, username: principal.username }, message: `import pipeline ${spec.name}` };
      // The manifest keeps the payload as sent: defaults are applied again on every load.
      const manifest: Manifest = { apiVersion: 'bi.controller/v1', kind: 'Pipeline', metadata: { name }, spec: req.body as Record<string, unknown> };
      const outcome = await app.runtime.submit(relPath, manifest, write);
      const pipelineId = outcome.resourceIds.pipelineId;
      const view = outcome.phase === 'Synced' && typeof pipelineId === 'string' ? readPipeline(app.runtime.db, pipelineId, app.runtime.clock()) : undefined;
      if (!view) {
        await app.runtime.withdraw(relPath, { ...write, message: `withdraw pipeline ${spec.name}: ${outcome.message}` });
        return reply.status(outcome.phase === 'Invalid' ? 400 : 422).send({ success: false, message: outcome.message || `pipeline ${spec.name} was not applied` });
      }
      return reply.status(201).send({
        success: true,
        message: 'Pipeline imported successfully',
        data: {
          pipelineId: view.pipelineId,
          name: view.name,
          status: view.status,
          steps: view.steps.map((s) => ({ id: s.id, type: s.type, name: s.name, status: s.status })),
        },
      });
    } finally {
      names.release(name);
    }
  }

  app.post('/v1/sdk/import-pipeline', { preHandler: requireApiKey(app) }, importPipeline);
  app.post('/v1/sdk/import-pipeline/:userId', { preHandler: requireSession(app) }, importPipeline);

  app.get('/v1/sdk/pipelines/:pipelineId', { preHandler: requireApiKey(app) }, async (req, reply) => {
    const { pipelineId } = req.params as { pipelineId: string };
    const view = readPipeline(app.runtime.db, pipelineId, app.runtime.clock());
    if (!view) return reply.status(404).send({ success: false, message: `Pipeline ${pipelineId} not found` });
    return reply.status(200).send({ success: true, data: view });
  });
}
