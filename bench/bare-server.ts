// The floor for the HTTP benchmark: a bare Fastify process answering the same constant the
// product's GET /v1/sdk/chart-types answers (passed in BARE_BODY), with no hooks, no logging.
import Fastify from 'fastify';

const body = JSON.parse(process.env.BARE_BODY ?? '{}') as unknown;
const app = Fastify({ logger: false });
app.get('/v1/sdk/chart-types', async () => body);
// The scheduling floor of the /healthz probes: an idle process answering the same way in the same phase (bench/lib/health-probe.ts).
app.get('/healthz', async () => ({ status: 'ok' }));
const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`listening url=${url}\n`);
process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
