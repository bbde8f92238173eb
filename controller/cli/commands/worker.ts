import { loadConfig } from '../../config.ts';
import { createLogger } from '../../log.ts';
import { defaultWorkerName, ReportError, RunWorker } from '../../runs/queue/worker.ts';
import type { CommandContext } from '../context.ts';
import { packageVersion } from '../version.ts';

/**
 * `bictl worker [--concurrency N]`: executes pipeline runs from the PostgreSQL job queue on this
 * machine and reports them to the controller (README "Runs on more than one machine"). Needs
 * BI_QUEUE_URL, BI_CONTROLLER_URL and BI_WORKER_TOKEN; BI_SECRET_KEY for stored secrets.
 */
export function registerWorker(ctx: CommandContext): void {
  ctx.program
    .command('worker')
    .description('execute pipeline runs from the job queue (BI_QUEUE_URL) and report them to the controller (BI_CONTROLLER_URL, BI_WORKER_TOKEN)')
    .option('--concurrency <n>', 'runs executing at once on this worker', '2')
    .action(async (opts: { concurrency: string }) => {
      const concurrency = Number(opts.concurrency);
      if (!Number.isInteger(concurrency) || concurrency < 1) {
        ctx.io.err('bictl worker: --concurrency must be an integer ≥ 1');
        return ctx.setCode(2);
      }
      let config;
      try {
        config = loadConfig(ctx.io.env);
      } catch (err) {
        ctx.io.err(`bictl worker: ${(err as Error).message}`);
        return ctx.setCode(2);
      }
      const queue = config.queue;
      const missing = [!queue && 'BI_QUEUE_URL', !queue?.controllerUrl && 'BI_CONTROLLER_URL', !queue?.workerToken && 'BI_WORKER_TOKEN'].filter(Boolean);
      if (!queue || !queue.controllerUrl || !queue.workerToken) {
        ctx.io.err(`bictl worker: ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set`);
        return ctx.setCode(2);
      }
      const log = createLogger({ level: config.logLevel });
      const worker = new RunWorker({
        queue: { ...queue, controllerUrl: queue.controllerUrl, workerToken: queue.workerToken },
        name: queue.workerName ?? defaultWorkerName(),
        concurrency,
        version: packageVersion(),
        secretKey: config.secretKey,
        env: ctx.io.env,
        filesDir: config.pipelineFilesDir,
        log,
      });
      try {
        await worker.start();
      } catch (err) {
        const refused = err instanceof ReportError && err.status === 401;
        ctx.io.err(
          `bictl worker: ${refused ? 'the controller refused BI_WORKER_TOKEN (401)' : err instanceof ReportError ? err.message : `cannot reach the controller at ${queue.controllerUrl}: ${(err as Error).message}`}`,
        );
        await worker.stop().catch(() => undefined);
        return ctx.setCode(1);
      }
      await new Promise<void>((resolve) => {
        const stop = (signal: string) => {
          log.info({ signal }, 'worker stopping: running runs finish first');
          void worker.stop().then(resolve, (err: Error) => {
            ctx.io.err(`bictl worker: ${err.message}`);
            ctx.setCode(1);
            resolve();
          });
        };
        process.once('SIGINT', () => stop('SIGINT'));
        process.once('SIGTERM', () => stop('SIGTERM'));
      });
      setTimeout(() => process.exit(), 1000).unref();
    });
}
