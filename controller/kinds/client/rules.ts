import { formatProblem, ValidationError } from '../../errors.ts';
import { CLIENT_ID_PATTERN } from '../../generated/schema-constants.ts';
import type { SchemaRegistry } from '../../manifest/validator.ts';
import { isPlainObject } from '../../objects.ts';
import type { Problem } from '../../types.ts';
import { validateSections } from '../dashboard/charts.ts';
import type { ClientSpec, VdmSpec } from './types.ts';

/** A VDM's display name; an unnamed VDM is called after its position. */
export function vdmName(v: VdmSpec, index: number): string {
  return v.name ?? `VDM ${index + 1}`;
}

/** A section's name; an unnamed section is called after its position. */
export function sectionName(name: string | undefined, index: number): string {
  return name ?? `Section ${index + 1}`;
}

/** Rules beyond the schema that need no store: unique VDM and dashboard names, the chart rules of the dashboard kind. */
export function clientRules(spec: ClientSpec): Problem[] {
  const problems: Problem[] = [];
  // Tolerant of input the schema rejected, so both lists can be reported at once.
  const vdms = Array.isArray(spec.vdm) ? spec.vdm : [];
  const seen = new Map<string, number>();
  vdms.forEach((v, i) => {
    if (!isPlainObject(v)) return;
    const name = vdmName(v, i);
    const first = seen.get(name);
    if (first !== undefined) problems.push({ path: `vdm[${i}].name`, message: `vdm[${i}].name "${name}" is also the name of vdm[${first}]` });
    else seen.set(name, i);
  });
  const dashboards = new Map<string, number>();
  (Array.isArray(spec.dashboards) ? spec.dashboards : []).forEach((d, i) => {
    if (!isPlainObject(d)) return;
    const first = dashboards.get(d.name);
    if (first !== undefined) {
      problems.push({ path: `dashboards[${i}].name`, message: `dashboards[${i}].name "${d.name}" is also the name of dashboards[${first}]` });
    } else dashboards.set(d.name, i);
    // Chart rules that need no VDM (types, drill-downs, card/bubble); fields are checked when deploying.
    problems.push(...validateSections(d.sections, undefined, `dashboards[${i}].sections`));
  });
  return problems;
}

const CLIENT_ID = new RegExp(CLIENT_ID_PATTERN);

/** True for a client ID the schema accepts (before uppercasing). */
export function isClientId(id: string): boolean {
  return id !== '' && CLIENT_ID.test(id);
}

/** `clientId` as stored: uppercased (docs/contract/api.md §4.1 rule 2). */
export function normalizeClientId(id: string): string {
  return id.toUpperCase();
}

/** One item of `Validation failed: a; b; c`: a whole sentence stays as it is, otherwise path and message. */
export function problemText(p: Problem): string {
  return /^[A-Z]/.test(p.message) ? p.message : formatProblem(p);
}

export function validationFailed(problems: Problem[]): ValidationError {
  return new ValidationError(problems, `Validation failed: ${problems.map(problemText).join('; ')}`);
}

/**
 * Checks an onboarding package from the API: clientId uppercased first, then the schema
 * (defaults filled in) and the rules above. Returns the package as sent (clientId uppercased,
 * no defaults added: that is what the manifest records) and the validated spec.
 */
export function parseOnboardingPackage(schemas: SchemaRegistry, body: unknown): { raw: Record<string, unknown>; spec: ClientSpec } {
  const raw = isPlainObject(body) ? { ...body } : body;
  if (isPlainObject(raw) && typeof raw.clientId === 'string') raw.clientId = normalizeClientId(raw.clientId);
  const copy: unknown = structuredClone(raw);
  const result = schemas.validate<ClientSpec>('client', copy);
  const rules = isPlainObject(copy) ? clientRules(copy as ClientSpec) : [];
  if (!result.ok) throw validationFailed([...result.problems, ...rules]);
  const problems = rules;
  if (problems.length) throw validationFailed(problems);
  return { raw: raw as Record<string, unknown>, spec: result.value };
}
