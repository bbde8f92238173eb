import type { Store } from '../../store/db.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { FacadeDefinition } from '../dashboard/store.ts';
import { fromJson } from '../json.ts';
import { readClient } from './registry.ts';
import type { ClientDashboardSpec, ClientSpec, VdmSpec } from './types.ts';

/** The onboarding package is also the export format (docs/contract/api.md §9): 2.3 plus `description` (and `suspended` when it is). */
export type OnboardingPackage = Omit<ClientSpec, 'suspended'> & { suspended?: boolean };

/**
 * The onboarding package that recreates an ACTIVE client: what the settings UI downloads and
 * imports. VDMs and dashboards come back as the package gave them (defaults filled in), so
 * onboarding the export elsewhere gives an equal client.
 */
export function exportClient(db: Store, clientId: string): OnboardingPackage {
  return clientPackage(db, clientId, ['ACTIVE']);
}

/**
 * The package of a client in one of `states`: the export (ACTIVE), and the manifest a restore or
 * a suspend writes back (an OFFBOARDED or SUSPENDED client keeps every resource it had).
 */
export function clientPackage(db: Store, clientId: string, states: readonly string[]): OnboardingPackage {
  const row = readClient(db, clientId);
  if (!row) throw new NotFoundError(`Client ${clientId} not found`);
  if (!states.includes(row.status) || !row.model_id || !row.connection_id || !row.core_model_id) {
    throw new ConflictError(`Client ${clientId} is ${row.status}: only an ACTIVE client can be exported`);
  }
  const model = db.statements.prepare('SELECT security_enabled, external_id_key FROM semantic_models WHERE model_id = ?').get(row.model_id) as
    | { security_enabled: number; external_id_key: string | null }
    | undefined;
  const vdm = (db.statements.prepare('SELECT config FROM vdms WHERE model_id = ? ORDER BY position').all(row.model_id) as { config: string }[]).map((v) =>
    fromJson<VdmSpec>(v.config, {} as VdmSpec),
  );
  const facadeIds = fromJson<string[]>(row.facade_ids, []);
  const dashboards = facadeIds.length
    ? (
        db
          .statements.prepare('SELECT definition FROM facades WHERE facade_id IN (SELECT value FROM json_each(?)) ORDER BY position')
          .all(JSON.stringify(facadeIds)) as { definition: string }[]
      ).map((f) => fromJson<Partial<FacadeDefinition>>(f.definition, {}).package as ClientDashboardSpec)
    : [];
  const pkg: OnboardingPackage = {
    clientId: row.client_id,
    clientName: row.client_name,
    description: row.description,
    connectionId: row.connection_id,
    coreModelId: row.core_model_id,
    ...(model?.external_id_key ? { externalIdKey: model.external_id_key } : {}),
    security: { enabled: model ? model.security_enabled === 1 : true },
    vdm,
  };
  if (dashboards.length) pkg.dashboards = dashboards;
  return pkg;
}
