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

  it('tenant endpoints (api, s3): every internal address refused by default, in every notation, after resolution', async () => {
    const p = new NetworkEgressPolicy({ listen: { host: '127.0.0.1', port: 8080 }, lookup: dns });
    const internal: [string, string][] = [
      ['127.0.0.1', 'loopback'],
      ['127.255.0.9', 'loopback'],
      ['::1', 'loopback'],
      ['[::1]', 'loopback'],
      ['10.1.2.3', 'private'],
      ['172.16.0.1', 'private'],
      ['172.31.255.254', 'private'],
      ['192.168.1.1', 'private'],
      ['100.64.0.1', 'shared (CGNAT)'],
      ['100.127.255.254', 'shared (CGNAT)'],
      ['0.0.0.0', 'this-network'],
      ['0.1.2.3', 'this-network'],
      ['::', 'this-network'],
      ['fc00::1', 'unique-local'],
      ['fd12:3456::1', 'unique-local'],
      ['fec0::1', 'site-local'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['[::ffff:7f00:1]', 'loopback'],
      ['0:0:0:0:0:ffff:7f00:0001', 'loopback'],
      ['::ffff:10.0.0.1', 'private'],
      ['::ffff:a00:1', 'private'],
      ['::127.0.0.1', 'loopback'],
      ['::7f00:1', 'loopback'],
      ['::ffff:0:7f00:1', 'loopback'],
      ['64:ff9b::a00:1', 'private'],
      ['2002:c0a8:101::1', 'private'],
      ['me.local', 'loopback'],
    ];
    for (const [host, kind] of internal) {
      await expect(p.endpoint(host, 80), host).rejects.toThrow(/is an internal \((.+)\) address; list the host in BI_PIPELINE_EGRESS to allow it$/);
      await expect(p.endpoint(host, 80), host).rejects.toThrow(`(${kind})`);
    }
    for (const host of ['169.254.169.254', '::ffff:a9fe:a9fe', '::ffff:169.254.169.254', 'fe80::1', '2002:a9fe:a9fe::1']) {
      await expect(p.endpoint(host, 80), host).rejects.toThrow(/is a link-local \(metadata\) address$/);
    }
    for (const host of ['93.184.216.34', '172.32.0.1', '100.128.0.1', '11.0.0.1', '2606:4700::1111', '::ffff:93.184.216.34']) {
      await expect(p.endpoint(host, 443), host).resolves.toHaveLength(1);
    }
    // A name with one internal address among public ones is refused; the checked addresses come back.
    const mixed = new NetworkEgressPolicy({ listen: { host: '127.0.0.1', port: 8080 }, lookup: lookup({ 'mixed.example': ['93.184.216.34', '192.168.0.10'], 'api.example.com': ['93.184.216.34', '2606:2800::1'] }) });
    await expect(mixed.endpoint('mixed.example', 443)).rejects.toThrow('Egress to mixed.example:443 is not allowed: 192.168.0.10 is an internal (private) address; list the host in BI_PIPELINE_EGRESS to allow it');
    expect(await mixed.endpoint('api.example.com', 443)).toEqual([{ address: '93.184.216.34', family: 4 }, { address: '2606:2800::1', family: 6 }]);
  });

  it('a host listed in BI_PIPELINE_EGRESS may be internal, but never link-local nor the controller itself; check() (databases, notifiers) keeps its rule', async () => {
    const p = new NetworkEgressPolicy({ listen: { host: '127.0.0.1', port: 8080 }, lookup: dns, allowHosts: ['127.0.0.1', 'metadata.internal', '169.254.169.254', '10.0.0.7:9000'] });
    expect(await p.endpoint('127.0.0.1', 9000)).toEqual([{ address: '127.0.0.1', family: 4 }]);
    expect(await p.endpoint('10.0.0.7', 9000)).toEqual([{ address: '10.0.0.7', family: 4 }]);
    await expect(p.endpoint('10.0.0.7', 9001)).rejects.toThrow(/not listed in BI_PIPELINE_EGRESS/);
    await expect(p.endpoint('127.0.0.1', 8080)).rejects.toThrow(/own listening address/);
    await expect(p.endpoint('169.254.169.254', 80)).rejects.toThrow(/link-local/);
    await expect(p.endpoint('metadata.internal', 80)).rejects.toThrow(/169\.254\.169\.254 is a link-local/);
    const open = new NetworkEgressPolicy({ listen: { host: '127.0.0.1', port: 8080 }, lookup: dns });
    await expect(open.check('127.0.0.1', 5432)).resolves.toBeUndefined();
    await expect(open.check('10.1.1.1', 5432)).resolves.toBeUndefined();
    await expect(open.check('::ffff:a9fe:a9fe', 80)).rejects.toThrow(/link-local/);
  });

  it('egressPolicyFor(config): the configured HOST/PORT and BI_PIPELINE_EGRESS', async () => {
    const p = egressPolicyFor(loadConfig({ HOST: '127.0.0.1', PORT: '8181', BI_PIPELINE_EGRESS: '127.0.0.1' }));
    await expect(p.check('127.0.0.1', 8181)).rejects.toThrow(/own listening address/);
    await expect(p.check('127.0.0.1', 5432)).resolves.toBeUndefined();
    await expect(p.check('10.1.1.1', 5432)).rejects.toThrow(/not listed in BI_PIPELINE_EGRESS/);
  });
});
