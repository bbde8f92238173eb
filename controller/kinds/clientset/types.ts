import type { Clientset, ClientsetInput } from '../../generated/schema-types.ts';

/** The `spec` of a ClientSet manifest (schemas/clientset.schema.json). */
export type ClientSetSpec = Clientset;
/** One input (a tenant's row): `id` plus scalar fields. */
export type Input = ClientsetInput;

/** Per-tenant state as the reads show it. */
export type TenantState = 'Synced' | 'Pending' | 'Failed' | 'Invalid' | 'orphaned' | 'OFFBOARDED';

/** Preview actions per tenant. */
export type PreviewAction = 'create' | 'update' | 'delete' | 'unchanged' | 'orphaned' | 'invalid';
