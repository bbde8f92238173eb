import { startServer } from '../../../api/server.ts';
import type { CommandContext } from '../main.ts';
import { commandConfig } from './config.ts';

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
    });
}
