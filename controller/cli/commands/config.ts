import { resolve } from 'node:path';
import { loadConfig, type Config } from '../../config.ts';
import type { CommandContext, GlobalFlags } from '../context.ts';

/** The configuration for a command: environment, then the global flags. */
export function commandConfig(ctx: CommandContext): Config {
  const flags = ctx.program.opts<GlobalFlags>();
  const overrides: Partial<Config> = {};
  if (flags.manifests) {
    overrides.manifestsDir = resolve(flags.manifests);
    overrides.seedManifests = false;
  }
  if (flags.db) {
    overrides.dbPath = resolve(flags.db);
    overrides.dataDir = resolve(flags.db, '..');
  }
  if (flags.adoptSource) overrides.adoptSource = true;
  return loadConfig(ctx.io.env, overrides);
}
