import { describe, expect, it } from 'vitest';
import { NetworkEgressPolicy } from '../../../../controller/runs/engine/egress.ts';
import { egressPolicyFor } from '../../../../controller/runs/engine/index.ts';
import { loadConfig } from '../../../../controller/config.ts';

const lookup = (table: Record<string, string[]>) => async (host: string) => {
  const found = table[host];
  if (!found) throw new Error('ENOTFOUND');
  return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

describe('NetworkEgressPolicy', () => {
  const dns = lookup({ 'metadata.internal': ['10.0.0.5', '169.254.169.254'], 'api.example.com': ['93.184.216.34'], 'me.local': ['127.0.0.1'] });

  it('refuses link-local (metadata) addresses, given directly, IPv4-mapped, or behind any resolved address', async () => {
    const p = new NetworkEgressPolicy({ listen: { host: '127.0.0.1', port: 8080 }, lookup: dns });
    await expect(p.check('169.254.169.254', 80)).rejects.toThrow('Egress to 169.254.169.254:80 is not allowed: 169.254.169.254 is a link-local (metadata) address');
    await expect(p.check('::ffff:169.254.1.1', 80)).rejects.toThrow(/link-local/);
    await expect(p.check('[fe80::1]', 80)).rejects.toThrow(/link-local/);
    await expect(p.check('metadata.internal', 80)).rejects.toThrow(/169\.254\.169\.254 is a link-local/);
    await expect(p.check('api.example.com', 443)).resolves.toBeUndefined();
  });

  it("refuses the controller's own listening address and port, by any loopback name; other ports pass", async () => {
    const p = new NetworkEgressPolicy({ listen: { host: '127.0.0.1', port: 8080 }, lookup: dns });
    for (const host of ['127.0.0.1', 'me.local', '127.0.0.2', '::1', '0.0.0.0']) {
      await expect(p.check(host, 8080)).rejects.toThrow(`Egress to ${host}:8080 is not allowed: it is the controller's own listening address`);
    }
    await expect(p.check('127.0.0.1', 5432)).resolves.toBeUndefined();
  });

  it('a wildcard listener counts every local interface address as its own', async () => {
    const p = new NetworkEgressPolicy({ listen: { host: '0.0.0.0', port: 9000 }, lookup: dns, localAddresses: () => ['192.168.1.20'] });
    await expect(p.check('192.168.1.20', 9000)).rejects.toThrow(/own listening address/);
    await expect(p.check('192.168.1.21', 9000)).resolves.toBeUndefined();
  });

  it('BI_PIPELINE_EGRESS: only listed hosts (optionally host:port), and still never link-local', async () => {
    const p = new NetworkEgressPolicy({ listen: { host: '127.0.0.1', port: 8080 }, lookup: dns, allowHosts: ['api.example.com', 'db.internal:5432', '169.254.169.254'] });
    await expect(p.check('api.example.com', 443)).resolves.toBeUndefined();
    await expect(p.check('API.example.com', 443)).resolves.toBeUndefined();
    await expect(p.check('other.example.com', 443)).rejects.toThrow('Egress to other.example.com:443 is not allowed: the host is not listed in BI_PIPELINE_EGRESS');
    await expect(p.check('db.internal', 5433)).rejects.toThrow(/not listed/);
    await expect(p.check('169.254.169.254', 80)).rejects.toThrow(/link-local/);
  });

  it('an unresolvable host is a clear error', async () => {
    const p = new NetworkEgressPolicy({ listen: { host: '127.0.0.1', port: 8080 }, lookup: dns });
    await expect(p.check('nowhere.invalid', 80)).rejects.toThrow('Host nowhere.invalid could not be resolved: ENOTFOUND');
  });

  it('egressPolicyFor(config): the configured HOST/PORT and BI_PIPELINE_EGRESS', async () => {
    const p = egressPolicyFor(loadConfig({ HOST: '127.0.0.1', PORT: '8181', BI_PIPELINE_EGRESS: '127.0.0.1' }));
    await expect(p.check('127.0.0.1', 8181)).rejects.toThrow(/own listening address/);
    await expect(p.check('127.0.0.1', 5432)).resolves.toBeUndefined();
    await expect(p.check('10.1.1.1', 5432)).rejects.toThrow(/not listed in BI_PIPELINE_EGRESS/);
  });
});
