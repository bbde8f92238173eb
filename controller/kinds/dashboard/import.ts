import { ForbiddenError, StepError, ValidationError } from '../../errors.ts';
import type { Runtime } from '../../runtime.ts';
import type { Manifest, Problem } from '../../types.ts';
import { ManifestNames } from '../../writers/free-names.ts';
import { readClient } from '../client/registry.ts';
import { slugify } from '../../writers/paths.ts';
import { buildSections } from './charts.ts';
import { CHARTS_REQUIRED, checkDashboardReferences, sectionsOf, validateDashboard, type DashboardSpec } from './spec.ts';
import { importSummary, readDashboard } from './store.ts';

export const DASHBOARDS_DIR = 'dashboards';
/** Shown in a dry run's plan where an ID would be issued. */
export const NEW_ID = '(new)';

export interface ImportCaller {
  userId: string;
  username: string;
  /** Tenant scope of the caller's API key: the dashboard must use that client's connection. */
  clientScope?: string;
}

/** The 201 body of spec 4.2 (without `success`). */
export interface ImportResult {
  facadeId: string;
  experiments: ReturnType<typeof importSummary>;
}

export interface ImportPlan extends ImportResult {
  dryRun: true;
  manifest: string;
}

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every problem of a payload that needs no store: schema, then the semantic rules. */
export function payloadProblems(rt: Runtime, spec: Rec): Problem[] {
  const schema = rt.schemas.validate<DashboardSpec>('dashboard', spec);
  const semantic = validateDashboard(spec, undefined);
  const all = [...semantic.filter((p) => p.message === CHARTS_REQUIRED), ...(schema.ok ? [] : schema.problems), ...semantic];
  const seen = new Set<string>();
  return all.filter((p) => !seen.has(p.message) && seen.add(p.message));
}

/** Every message already names its field; the list is joined as spec 7 shows. */
export function invalid(problems: Problem[]): ValidationError {
  return new ValidationError(problems, problems.map((p) => p.message).join('; '));
}

/**
 * `POST /v1/sdk/import`: validates the payload, writes it as a new Dashboard manifest
 * (`dashboards/<name>.yaml`, suffixed `-2`, `-3`, … when taken), reconciles it now and answers
 * from the store. A failed apply withdraws the manifest again, so the caller gets all or nothing.
 */
export class DashboardImporter {
  readonly #rt: Runtime;
  readonly #names: ManifestNames;

  constructor(opts: { runtime: Runtime }) {
    this.#rt = opts.runtime;
    const rt = opts.runtime;
    this.#names = new ManifestNames({ kind: 'Dashboard', dir: DASHBOARDS_DIR, locks: rt.locks, status: rt.reconciler.status, writer: rt.writer });
  }

  /** Validates `body` and returns the spec with its defaults, or throws ValidationError / ForbiddenError. */
  check(body: unknown, caller: ImportCaller): DashboardSpec {
    if (!isRec(body)) throw invalid([{ path: '', message: 'Request body must be a JSON object' }]);
    const spec = structuredClone(body);
    const problems = payloadProblems(this.#rt, spec);
    if (problems.length) throw invalid(problems);
    const valid = spec as unknown as DashboardSpec;
    this.#assertTenant(valid, caller);
    const refs = checkDashboardReferences(this.#rt.db, valid);
    if (refs.length) throw invalid(refs);
    return valid;
  }

  /** What an import would create, writing nothing. */
  async plan(body: unknown, caller: ImportCaller): Promise<ImportPlan> {
    const spec = this.check(body, caller);
    const name = await this.#names.peek(slugify(spec.name, 'dashboard'));
    const sections = buildSections(sectionsOf(spec)).map((s) => ({ ...s, experimentId: NEW_ID }));
    return { dryRun: true, manifest: this.#names.relPath(name), facadeId: NEW_ID, experiments: importSummary(sections) };
  }

  async import(body: unknown, caller: ImportCaller): Promise<ImportResult> {
    this.check(body, caller);
    const spec = body as Rec & { name: string };
    const base = slugify(spec.name, 'dashboard');
    const name = await this.#names.reserve(base);
    const relPath = this.#names.relPath(name);
    let freed = false;
    const manifest: Manifest = { apiVersion: 'bi.controller/v1', kind: 'Dashboard', metadata: { name }, spec };
    const opts = { actor: { userId: caller.userId, username: caller.username }, message: `import dashboard ${spec.name}` };
    try {
      const outcome = await this.#rt.submit(relPath, manifest, opts);
      if (outcome.phase !== 'Synced') {
        await this.#rt.withdraw(relPath, { ...opts, message: `withdraw dashboard ${spec.name}: ${outcome.message}` });
        freed = true;
        if (outcome.phase === 'Invalid') throw new ValidationError([], outcome.message);
        throw new StepError(outcome.step ?? 'apply', outcome.message.replace(/^[^:]+: /, ''));
      }
      const facadeId = String(outcome.resourceIds.facadeId);
      const view = readDashboard(this.#rt.db, facadeId);
      if (!view) throw new StepError('apply', `facade ${facadeId} was not stored`);
      return { facadeId, experiments: importSummary(view.sections) };
    } finally {
      this.#names.release(base, name, freed);
    }
  }

  #assertTenant(spec: DashboardSpec, caller: ImportCaller): void {
    if (!caller.clientScope) return;
    if (readClient(this.#rt.db, caller.clientScope)?.connection_id !== spec.dataSource.dbId) {
      throw new ForbiddenError(`API key is scoped to client ${caller.clientScope}: dataSource.dbId must be that client's connection`);
    }
  }
}
