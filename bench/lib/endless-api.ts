import { readFileSync } from 'node:fs';
import { type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from './api-client.ts';
import { manifest, toYaml } from './payloads.ts';
import { startBenchServer } from './setup.ts';

/** `{"data":[` and then rows as fast as the client takes them, forever. */
function endlessRows(res: ServerResponse, sent: { bytes: number }): void {
  const chunk = Buffer.from('{"id":123456,"name":"a row of an endless page","amount":12.5,"tags":["x","y"]},'.repeat(800));
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"data":[');
  const pump = (): void => {
    while (!res.destroyed) {
      sent.bytes += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
  };
  pump();
}

/** Resident set size of a process now, in MB (Linux /proc). */
function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

export interface EndlessApiRun {
  /** The loopback listener's URL (the API source's endpoint is `<url>/rows`). */
  apiUrl: string;
  import: { status: number; text: string };
  run?: { status: string; error: string | null; rowsRead: number };
  /** Bytes the listener handed to its socket. */
  sentBytes: number;
  /** The server's VmHWM after the run (its peak RSS since start), and the highest VmRSS sampled every 50 ms. */
  peakRssMb: number;
  sampledRssMb: number;
  runMs: number;
}

/**
 * An API source whose server answers an endless JSON array as fast as it is read, run through a
 * real server process (`bictl serve`, BI_PIPELINE_EGRESS=127.0.0.1): how much memory the
 * controller holds while the run streams until BI_RUN_MAX_RESPONSE_BYTES stops it.
 */
export async function runEndlessApi(opts: { prefix: string; base?: string; env?: Record<string, string> }): Promise<EndlessApiRun> {
  const sent = { bytes: 0 };
  const api = createServer((_req, res) => endlessRows(res, sent));
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  const apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  const connection = manifest('Connection', 'endless-api', { connectionId: 'D2026A00077', name: 'Endless API', vendor: 'POSTGRESQL', accountUrl: apiUrl });
  const ctx = await startBenchServer({
    prefix: opts.prefix,
    base: opts.base,
    files: { 'connections/endless-api.yaml': toYaml(connection) },
    server: { env: { BI_PIPELINE_EGRESS: '127.0.0.1', ...opts.env } },
  });
  const pid = ctx.server.pid as number;
  const out: EndlessApiRun = { apiUrl, import: { status: 0, text: '' }, sentBytes: 0, peakRssMb: 0, sampledRssMb: 0, runMs: 0 };
  try {
    const imported = await request(`${ctx.server.url}/v1/sdk/import-pipeline`, {
      headers: ctx.keyHeaders,
      body: {
        name: 'Endless API',
        source: { connectionId: 'D2026A00077', type: 'api', config: { endpoint: '/rows', rootKey: 'data' } },
        destination: { connectionId: 'D2026A00077' },
        steps: [{ type: 'validate', config: { rules: [{ field: 'id', rule: 'not_null' }] } }],
      },
    });
    out.import = { status: imported.status, text: imported.text };
    if (imported.status !== 201) return out;
    const pipelineId = (imported.json as { data: { pipelineId: string } }).data.pipelineId;
    const t0 = performance.now();
    const started = await request(`${ctx.server.url}/v1/sdk/pipelines/${pipelineId}/runs`, { method: 'POST', headers: ctx.keyHeaders });
    if (started.status !== 202) {
      out.import = { status: started.status, text: started.text };
      return out;
    }
    const runId = (started.json as { run: { runId: string } }).run.runId;
    const sampler = setInterval(() => (out.sampledRssMb = Math.max(out.sampledRssMb, rssMb(pid))), 50);
    try {
      for (;;) {
        const res = await request(`${ctx.server.url}/v1/sdk/pipeline-runs/${runId}`, { headers: ctx.keyHeaders });
        const run = (res.json as { run: NonNullable<EndlessApiRun['run']> }).run;
        out.run = run;
        if (run.status !== 'queued' && run.status !== 'running') break;
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      clearInterval(sampler);
    }
    out.runMs = performance.now() - t0;
    out.peakRssMb = ctx.server.peakRssMb() ?? out.sampledRssMb;
    out.sentBytes = sent.bytes;
    return out;
  } finally {
    await ctx.close();
    await new Promise<void>((r) => {
      api.close(() => r());
      api.closeAllConnections();
    });
  }
}
