export { Authorizer, ADMIN_REQUIRED, connectionTaken, type Action, type Target } from './authorizer.ts';
export { ClientHeldError, holdMessage } from './holds.ts';
export { effectiveTenants, isUnconfined, tenantsOf, withinTenants, type Tenants } from './tenants.ts';
