export { Authorizer, ADMIN_REQUIRED, type Action, type Target } from './authorizer.ts';
export { ClientHeldError, holdMessage } from './holds.ts';
export { effectiveTenants, isUnconfined, tenantsOf, withinTenants, type Tenants } from './tenants.ts';
