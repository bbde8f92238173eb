import type { FastifyInstance } from 'fastify';
import { ConflictError, NotFoundError, ValidationError } from '../../controller/errors.ts';
import { ClientSetReads } from '../../controller/kinds/clientset/reads.ts';
import type { ClientSetSpec } from '../../controller/kinds/clientset/types.ts';
import type { Manifest } from '../../controller/types.ts';
import { parseManifestText } from '../../controller/manifest/loader.ts';
import { clientSetSchemas } from '../schemas/clientsets.ts';

const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'];

/** A YAML body, kept as text until the handler (after the auth guard) parses it. */
class YamlText {
  constructor(readonly text: string) {}
}

/** Kind ClientSet: reads, preview (the reconciler's dry run) and approve (admin sessions). */
export default async function clientSetRoutes(app: FastifyInstance): Promise<void> {
  const reads = () => new ClientSetReads({ store: app.runtime.clientSets.store, status: app.runtime.reconciler.status });
  const readOr404 = (name: string) => {
    const set = reads().read(name);
    if (!set) throw new NotFoundError(`ClientSet ${name} not found`);
    return set;
  };

  app.get('/v1/reconciler/clientsets', { schema: clientSetSchemas.list }, async () => {
    const r = reads();
    const clientSets = r.names().flatMap((name) => {
      const set = r.read(name);
      if (!set) return [];
      const { tenants: _tenants, history: _history, ...summary } = set;
      return [{ ...summary, states: r.states(set) }];
    });
    return { success: true, clientSets };
  });

  app.get<{ Params: { name: string } }>('/v1/reconciler/clientsets/:name', { schema: clientSetSchemas.read }, async (req) => {
    return { success: true, clientSet: readOr404(req.params.name) };
  });

  // The preview takes the manifest as JSON or, as its file is written, as YAML (`Content-Type:
  // application/yaml`): the text is read after the auth guard, by the manifest loader's own parser.
  await app.register(async (scope) => {
    scope.addContentTypeParser(YAML_TYPES, { parseAs: 'string' }, (_req, text, done) => done(null, new YamlText(text as string)));
    scope.post<{ Body: unknown }>('/v1/reconciler/clientsets/preview', { schema: clientSetSchemas.preview }, async (req) => {
      const rt = app.runtime;
      let body = req.body;
      if (body instanceof YamlText) {
        const parsed = parseManifestText(body.text);
        if ('problems' in parsed) throw new ValidationError(parsed.problems);
        body = parsed.value;
      }
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ValidationError([{ path: '', message: 'Request body must be a ClientSet manifest (a JSON object)' }]);
      const doc = structuredClone(body) as Record<string, unknown>;
      doc.apiVersion ??= 'bi.controller/v1';
      const checked = rt.schemas.validateManifest(doc);
      if (!checked.ok) throw new ValidationError(checked.problems);
      if (checked.value.kind !== 'ClientSet') throw new ValidationError([{ path: 'kind', message: 'kind must be ClientSet' }]);
      const preview = rt.previewClientSet(checked.value as Manifest<ClientSetSpec>);
      return { success: true, ...preview };
    });
  });

  // The body (optional) is checked at the edge (schemas/api.schema.json `ClientSetApproveRequest`).
  app.post<{ Params: { name: string }; Body: { digest?: string } | undefined }>(
    '/v1/reconciler/clientsets/:name/approve',
    { schema: clientSetSchemas.approve },
    async (req) => {
      const rt = app.runtime;
      const name = req.params.name;
      const approved = rt.clientSets.approve(name, req.body?.digest);
      if (!approved.ok && approved.reason === 'not-found') throw new NotFoundError(`ClientSet ${name} not found`);
      if (!approved.ok) throw new ConflictError(`ClientSet ${name} is at digest ${approved.current ?? '(none)'}`);
      await rt.track(() => rt.reconciler.expandSet(`ClientSet/${name}`));
      return { success: true, clientSet: readOr404(name) };
    },
  );
}
