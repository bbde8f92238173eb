import { createServer } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonFile } from '../../../../controller/runs/engine/sources/files.ts';
import { resolver, runEngine, steps } from './harness.ts';

const SECRET = 'TOP-SECRET-7731';

describe('files per tenant, and no error echoes what it read', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'bi-reach-files-'));
    mkdirSync(join(root, 'ACME'));
    mkdirSync(join(root, 'GLOBEX'));
    writeFileSync(join(root, 'ACME', 'orders.csv'), 'id,who\n1,acme\n');
    writeFileSync(join(root, 'GLOBEX', 'secret.csv'), `id,who\n9,${SECRET}\n`);
    symlinkSync(join(root, 'GLOBEX', 'secret.csv'), join(root, 'ACME', 'link.csv'));
    writeFileSync(join(root, 'ACME', 'bad.ndjson'), `{"id":1}\n{"password":"${SECRET}"\n`);
    writeFileSync(join(root, 'ACME', 'bad.csv'), `id,who\n1,x"${SECRET}"\n`);
    writeFileSync(join(root, 'ACME', 'bad.json'), `{"fieldMappings": ${SECRET}}`);
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const read = (owner: string | null, path: string, extra: Record<string, unknown> = {}) =>
    runEngine({ owner, filesDir: root, steps: steps(['source', { connectionId: 'C1', path, ...extra }]) });

  it('a pipeline owned by ACME reads only under <BI_PIPELINE_FILES_DIR>/ACME/, its paths relative to that folder', async () => {
    expect((await read('ACME', 'orders.csv')).result).toMatchObject({ status: 'succeeded', rowsRead: 1 });
    const escapes = [
      ['../GLOBEX/secret.csv', 'file ../GLOBEX/secret.csv must be a path inside BI_PIPELINE_FILES_DIR'],
      ['GLOBEX/secret.csv', 'file GLOBEX/secret.csv does not exist in BI_PIPELINE_FILES_DIR'],
      ['link.csv', 'file link.csv resolves outside BI_PIPELINE_FILES_DIR'],
    ];
    for (const [path, error] of escapes) {
      const { result } = await read('ACME', path);
      expect(result).toMatchObject({ status: 'failed', rowsRead: 0, error: `step source-0 (step-1-0) failed: ${error}` });
    }
  });

  it('an unowned (admin-only) pipeline reads the whole folder', async () => {
    expect((await read(null, 'GLOBEX/secret.csv')).result).toMatchObject({ status: 'succeeded', rowsRead: 1 });
    expect((await read(null, 'ACME/orders.csv')).result).toMatchObject({ status: 'succeeded', rowsRead: 1 });
  });

  it('a malformed NDJSON, CSV or mapping file fails without its content in the error', async () => {
    const ndjson = await read('ACME', 'bad.ndjson');
    expect(ndjson.result.error).toBe('step source-0 (step-1-0) failed: line 2 is not JSON');
    const csv = await read('ACME', 'bad.csv');
    expect(csv.result.status).toBe('failed');
    expect(csv.result.error).toMatch(/^step source-0 \(step-1-0\) failed: CSV CSV_[A-Z_]+ on line 2$/);
    await expect(readJsonFile(join(root, 'ACME'), 'bad.json')).rejects.toThrow(/^file bad\.json is not valid JSON$/);
    for (const r of [ndjson, csv]) expect(JSON.stringify(r)).not.toContain(SECRET);
  });

  it('an API answer that is not JSON fails without its body in the error', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`<html>${SECRET}</html>`);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const { result, logs } = await runEngine({
        source: { connectionId: 'API', type: 'api' },
        connections: resolver({ API: { connectionId: 'API', vendor: 'SNOWFLAKE', accountUrl: url } }),
        steps: steps(['source', { connectionId: 'API', endpoint: '/x', paginated: false }]),
      });
      // The body is streamed: what is not a JSON array is refused by shape, never quoted.
      expect(result).toMatchObject({ status: 'failed', error: `step source-0 (step-1-0) failed: API ${url}/x: the response is not an array` });
      expect(JSON.stringify({ result, logs })).not.toContain(SECRET);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
