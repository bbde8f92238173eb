import type { Runtime } from '../runtime.ts';
import { AuthService, authSettingsFromEnv, type AuthSettings } from './service.ts';

const services = new WeakMap<Runtime, AuthService>();

/**
 * The one AuthService of a runtime (its key cache and limiters must be shared by every route),
 * created on first use with settings from the environment, flushed at the runtime's shutdown.
 */
export function authFor(runtime: Runtime): AuthService {
  return services.get(runtime) ?? installAuth(runtime);
}

/** Creates the runtime's AuthService with explicit settings (tests, `bictl`); replaces none already in use. */
export function installAuth(runtime: Runtime, settings: Partial<AuthSettings> = {}, env: NodeJS.ProcessEnv = process.env): AuthService {
  const existing = services.get(runtime);
  if (existing) return existing;
  const service = new AuthService({ db: runtime.db, clock: runtime.clock, log: runtime.log, settings: { ...authSettingsFromEnv(env), ...settings } });
  services.set(runtime, service);
  runtime.onShutdown(() => service.close());
  return service;
}
