import type { FastifyInstance } from 'fastify';
import { formatProblem } from '../controller/errors.ts';

/** The write routes whose body is a manifest spec, by route pattern → the schema of that body. */
export const BODY_SCHEMAS: Readonly<Record<string, string>> = {
  '/v1/sdk/client/onboard': 'client',
  '/v1/sdk/client/onboard/:userId': 'client',
  '/v1/sdk/import': 'dashboard',
  '/v1/sdk/import/:userId': 'dashboard',
  '/v1/sdk/import-pipeline': 'pipeline',
  '/v1/sdk/import-pipeline/:userId': 'pipeline',
};

/**
 * A successful answer of a write route carries `warnings`: the body's unknown fields, each with
 * the nearest known name (they are kept in the manifest, and shown with its status). Absent
 * when there are none, so answers to clean bodies are as they were. In strict mode
 * (BI_STRICT_MANIFESTS) the same fields were already refused with 400 by the handler.
 */
export function registerWarnings(app: FastifyInstance): void {
  app.addHook('preSerialization', async (req, reply, payload: unknown) => {
    const stem = BODY_SCHEMAS[req.routeOptions.url ?? ''];
    if (!stem || reply.statusCode >= 300 || !payload || typeof payload !== 'object' || Array.isArray(payload)) return payload;
    if (!req.body || typeof req.body !== 'object' || Array.isArray(req.body)) return payload;
    const warnings = app.runtime.schemas.unknownFields(stem, req.body).map(formatProblem);
    return warnings.length ? { ...payload, warnings } : payload;
  });
}
