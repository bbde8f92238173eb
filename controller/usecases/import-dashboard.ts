import { ApplyFailedError, ValidationError } from '../errors.ts';
import { buildSections } from '../kinds/dashboard/charts.ts';
import { CHARTS_REQUIRED, checkDashboardReferences, sectionsOf, validateDashboard, type DashboardSpec } from '../kinds/dashboard/spec.ts';
import { importSummary, readDashboard } from '../kinds/dashboard/store.ts';
import { NEW_ID } from '../kinds/client/plan.ts';
import type { SchemaRegistry } from '../manifest/validator.ts';
import type { Store } from '../store/db.ts';
import type { Problem } from '../types.ts';
import type { Principal } from '../auth/principal.ts';
import type { Authorizer } from '../authz/index.ts';
import { ownerOfDashboard } from '../kinds/dashboard/store.ts';
import { NewManifests, type NewManifestPorts } from './new-manifest.ts';
import { isPlainObject } from '../objects.ts';

export const DASHBOARDS_DIR = 'dashboards';

/** A confined caller's dashboard on a shared connection needs a VDM of its own client to belong to. */
export const NO_TENANT = 'dataSource.vdmId must name a VDM of your client when dataSource.dbId is a shared connection';

/** The 201 body of docs/contract/api.md §4.2 (without `success`). */
export interface ImportResult {
  facadeId: string;
  experiments: ReturnType<typeof importSummary>;
}

export interface ImportPlan extends ImportResult {
  dryRun: true;
  manifest: string;
}

type Rec = Record<string, unknown>;

/** Every problem of a payload that needs no store: schema, then the semantic rules. */
export function payloadProblems(schemas: SchemaRegistry, spec: Rec): Problem[] {
  const schema = schemas.validate<DashboardSpec>('dashboard', spec);
  const semantic = validateDashboard(spec, undefined);
  const all = [...semantic.filter((p) => p.message === CHARTS_REQUIRED), ...(schema.ok ? [] : schema.problems), ...semantic];
  const seen = new Set<string>();
  return all.filter((p) => !seen.has(p.message) && seen.add(p.message));
}

/** Every message already names its field; the list is joined as docs/contract/api.md §7 shows. */
export function invalid(problems: Problem[]): ValidationError {
  return new ValidationError(problems, problems.map((p) => p.message).join('; '));
}

/** What a dashboard import needs of the controller. */
export interface ImportDashboardPorts extends NewManifestPorts {
  readonly db: Store;
  readonly authz: Authorizer;
}

/**
 * docs/contract/api.md §4.2/§4.3: validates the payload, submits it as a new Dashboard manifest
 * (`dashboards/<name>.yaml`, suffixed `-2`, `-3`, … when taken) and answers from the store.
 */
export class ImportDashboard {
  readonly #rt: ImportDashboardPorts;
  readonly #manifests: NewManifests;
  readonly #authz: Authorizer;

  constructor(opts: { runtime: ImportDashboardPorts }) {
    this.#rt = opts.runtime;
    this.#authz = opts.runtime.authz;
    this.#manifests = new NewManifests({ runtime: opts.runtime, kind: 'Dashboard', dir: DASHBOARDS_DIR, fallbackName: 'dashboard' });
  }

  /** Validates `body` and returns the spec with its defaults, or throws ValidationError / ForbiddenError. */
  check(body: unknown, caller: Principal): DashboardSpec {
    if (!isPlainObject(body)) throw invalid([{ path: '', message: 'Request body must be a JSON object' }]);
    const spec = structuredClone(body);
    const problems = payloadProblems(this.#rt.schemas, spec);
    if (problems.length) throw invalid(problems);
    const valid = spec as unknown as DashboardSpec;
    const refs = checkDashboardReferences(this.#rt.db, valid, '', {
      connection: (connectionId) => this.#authz.can(caller, 'use', { kind: 'connection', connectionId }),
      vdm: (vdmId) => this.#authz.can(caller, 'use', { kind: 'vdm', vdmId }),
    });
    if (refs.length) throw invalid(refs);
    // The dashboard must land within the caller's tenants (on a shared connection: by its VDM).
    this.#authz.requireOwnedWithin(caller, () => ownerOfDashboard(this.#rt.db, valid.dataSource), NO_TENANT);
    return valid;
  }

  /** What an import would create, writing nothing: the checks, then the reconciler's dry run of the manifest it would write. */
  async plan(body: unknown, caller: Principal): Promise<ImportPlan> {
    const spec = this.check(body, caller);
    const { relPath } = await this.#manifests.dryRun({ displayName: spec.name, kind: 'Dashboard', spec: body as Rec, caller });
    const sections = buildSections(sectionsOf(spec)).map((s) => ({ ...s, experimentId: NEW_ID }));
    return { dryRun: true, manifest: relPath, facadeId: NEW_ID, experiments: importSummary(sections) };
  }

  async run(body: unknown, caller: Principal): Promise<ImportResult> {
    this.check(body, caller);
    const spec = body as Rec & { name: string };
    return this.#manifests.submit({
      displayName: spec.name,
      kind: 'Dashboard',
      spec,
      caller,
      message: `import dashboard ${spec.name}`,
      accept: (result) => {
        if (result.phase === 'Invalid') throw new ValidationError([], result.message);
        if (result.phase !== 'Synced') throw new ApplyFailedError(result);
        const facadeId = String(result.resourceIds.facadeId);
        const view = readDashboard(this.#rt.db, facadeId);
        if (!view) throw new ApplyFailedError(result, `apply: facade ${facadeId} was not stored`);
        return { facadeId, experiments: importSummary(view.sections) };
      },
    });
  }
}
