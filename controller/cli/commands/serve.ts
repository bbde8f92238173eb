import { startServer } from '../../../api/server.ts';
import type { CommandContext } from '../context.ts';
import { commandConfig } from './config.ts';

/** After a clean shutdown, the longest a leftover handle may keep the process alive. */
const EXIT_GRACE_MS = 1000;

export function registerServe(ctx: CommandContext): void {
  ctx.program
    .command('serve')
    .description('run the API and the reconciler (HOST, PORT, BI_MANIFESTS_DIR, BI_DB_PATH, BI_GIT_URL)')
    .option('--host <host>', 'listen address (env HOST, default 127.0.0.1)')
    .option('--port <port>', 'listen port (env PORT, default 8080)')
    .action(async (opts: { host?: string; port?: string }) => {
      const config = commandConfig(ctx);
      if (opts.host) config.host = opts.host;
      if (opts.port) config.port = Number(opts.port);
      const server = await startServer(config);
      await new Promise<void>((resolve) => {
        const stop = (signal: string) => {
          server.runtime.log.info({ signal }, 'shutting down');
          void server.close().then(resolve, (err: Error) => {
            ctx.io.err(`shutdown failed: ${err.message}`);
            ctx.setCode(1);
            resolve();
          });
        };
        process.once('SIGINT', () => stop('SIGINT'));
        process.once('SIGTERM', () => stop('SIGTERM'));
      });
      // Shut down cleanly (store closed); a killed git's helper (git-remote-http waiting on a
      // remote that does not answer) may still hold a pipe open, which must not keep the
      // process alive: leave once nothing else is left to do, or after a moment at the latest.
      setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
    });
}
