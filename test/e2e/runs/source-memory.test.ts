import { describe, expect, it } from 'vitest';
import { runEndlessApi } from '../../../bench/lib/endless-api.ts';

describe('API source memory, through the real server process', () => {
  it('an endless fast response keeps the controller under 300 MB RSS and fails the run naming BI_RUN_MAX_RESPONSE_BYTES', async () => {
    const r = await runEndlessApi({ prefix: 'e2e-source-memory' });
    expect(r.import.status, r.import.text).toBe(201);
    process.stdout.write(`${JSON.stringify({ test: 'endless API response', sentMB: Math.round(r.sentBytes / 2 ** 20), rowsRead: r.run?.rowsRead, sampledRssMb: Math.round(r.sampledRssMb), peakRssMb: Math.round(r.peakRssMb), runMs: Math.round(r.runMs) })}\n`);
    expect(r.run?.status).toBe('failed');
    expect(r.run?.error).toContain(`API ${r.apiUrl}/rows: response larger than BI_RUN_MAX_RESPONSE_BYTES (268435456 bytes)`);
    expect(r.sentBytes).toBeGreaterThan(256 * 2 ** 20);
    expect(r.peakRssMb).toBeLessThan(300);
  }, 300_000);
});
