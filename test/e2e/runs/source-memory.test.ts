import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { request } from '../../../bench/lib/api-client.ts';
import { manifest, toYaml } from '../../../bench/lib/payloads.ts';
import { startBenchServer } from '../../../bench/lib/setup.ts';
import { listen } from '../../helpers/http-listener.ts';

/** Resident set size of a process now, in MB (Linux /proc). */
function rssMb(pid: number): number {
  const kb = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

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

describe('API source memory, through the real server process', () => {
  it('an endless fast response keeps the controller under 300 MB RSS and fails the run naming BI_RUN_MAX_RESPONSE_BYTES', async () => {
    const sent = { bytes: 0 };
    const api = await listen((_req, res) => endlessRows(res, sent));
    const connection = manifest('Connection', 'endless-api', { connectionId: 'D2026A00077', name: 'Endless API', vendor: 'POSTGRESQL', accountUrl: api.url });
    const ctx = await startBenchServer({
      prefix: 'e2e-source-memory',
      files: { 'connections/endless-api.yaml': toYaml(connection) },
      server: { env: { BI_PIPELINE_EGRESS: '127.0.0.1' } },
    });
    const pid = ctx.server.pid as number;
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
      expect(imported.status, imported.text).toBe(201);
      const pipelineId = (imported.json as { data: { pipelineId: string } }).data.pipelineId;
      const started = await request(`${ctx.server.url}/v1/sdk/pipelines/${pipelineId}/runs`, { method: 'POST', headers: ctx.keyHeaders });
      expect(started.status, started.text).toBe(202);
      const runId = (started.json as { run: { runId: string } }).run.runId;
      let sampled = 0;
      const sampler = setInterval(() => (sampled = Math.max(sampled, rssMb(pid))), 50);
      let run: { status: string; error: string | null; rowsRead: number };
      try {
        for (;;) {
          const res = await request(`${ctx.server.url}/v1/sdk/pipeline-runs/${runId}`, { headers: ctx.keyHeaders });
          run = (res.json as { run: typeof run }).run;
          if (run.status !== 'queued' && run.status !== 'running') break;
          await new Promise((r) => setTimeout(r, 100));
        }
      } finally {
        clearInterval(sampler);
      }
      const peak = ctx.server.peakRssMb() ?? sampled;
      process.stdout.write(`${JSON.stringify({ test: 'endless API response', sentMB: Math.round(sent.bytes / 2 ** 20), rowsRead: run.rowsRead, sampledRssMb: Math.round(sampled), peakRssMb: Math.round(peak) })}\n`);
      expect(run.status).toBe('failed');
      expect(run.error).toContain(`API ${api.url}/rows: response larger than BI_RUN_MAX_RESPONSE_BYTES (268435456 bytes)`);
      expect(sent.bytes).toBeGreaterThan(256 * 2 ** 20);
      expect(peak).toBeLessThan(300);
    } finally {
      await ctx.close();
      await api.close();
    }
  }, 300_000);
});
