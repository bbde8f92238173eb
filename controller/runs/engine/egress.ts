import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { EgressPolicy } from '../types.ts';

export type LookupAll = (host: string) => Promise<{ address: string; family: number }[]>;

export interface NetworkEgressPolicyOptions {
  /** The controller's own listening address and port (HOST, PORT). */
  listen: { host: string; port: number };
  /** `BI_PIPELINE_EGRESS`: when non-empty, only these hosts (names or addresses, optionally `host:port`). */
  allowHosts?: string[];
  /** Name resolution (every address is checked); dns.lookup by default. */
  lookup?: LookupAll;
  /** This machine's interface addresses (a wildcard listener answers on each); os.networkInterfaces() by default. */
  localAddresses?: () => string[];
}

export class EgressDeniedError extends Error {}

const LINK_LOCAL = new BlockList();
LINK_LOCAL.addSubnet('169.254.0.0', 16, 'ipv4');
LINK_LOCAL.addSubnet('fe80::', 10, 'ipv6');

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

const WILDCARD = new Set(['0.0.0.0', '::', '']);

/** `::ffff:169.254.1.1` → `169.254.1.1`; brackets removed. */
function plain(address: string): string {
  const a = address.replace(/^\[|\]$/g, '').toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  return mapped ? (mapped[1] as string) : a;
}

const family = (a: string): 'ipv4' | 'ipv6' => (isIP(a) === 6 ? 'ipv6' : 'ipv4');

/**
 * Where a pipeline may connect: never a link-local address (169.254.0.0/16, fe80::/10: cloud
 * metadata), never the controller's own listening address and port (a wildcard listener counts as
 * every local address), and only `allowHosts` when that list is set. Host names are resolved and
 * every address is checked.
 */
export class NetworkEgressPolicy implements EgressPolicy {
  readonly #opts: NetworkEgressPolicyOptions;
  readonly #lookup: LookupAll;

  constructor(opts: NetworkEgressPolicyOptions) {
    this.#opts = opts;
    this.#lookup = opts.lookup ?? ((host) => dnsLookup(host, { all: true, verbatim: true }));
  }

  async check(host: string, port: number): Promise<void> {
    const name = plain(host);
    const allow = (this.#opts.allowHosts ?? []).map((h) => h.trim().toLowerCase()).filter(Boolean);
    if (allow.length > 0 && !allow.includes(name) && !allow.includes(`${name}:${port}`) && !allow.includes(`[${name}]:${port}`)) {
      throw new EgressDeniedError(`Egress to ${host}:${port} is not allowed: the host is not listed in BI_PIPELINE_EGRESS`);
    }
    const addresses = isIP(name) ? [name] : (await this.#resolve(name)).map(plain);
    const own = await this.#ownAddresses();
    for (const address of addresses) {
      if (LINK_LOCAL.check(address, family(address))) {
        throw new EgressDeniedError(`Egress to ${host}:${port} is not allowed: ${address} is a link-local (metadata) address`);
      }
      if (port === this.#opts.listen.port && own(address)) {
        throw new EgressDeniedError(`Egress to ${host}:${port} is not allowed: it is the controller's own listening address`);
      }
    }
  }

  async #resolve(name: string): Promise<string[]> {
    try {
      const found = await this.#lookup(name);
      if (found.length === 0) throw new Error('no address');
      return found.map((a) => a.address);
    } catch (err) {
      throw new Error(`Host ${name} could not be resolved: ${(err as Error).message}`);
    }
  }

  /** Whether an address reaches the controller's listener. */
  async #ownAddresses(): Promise<(address: string) => boolean> {
    const listenHost = plain(this.#opts.listen.host);
    const local = (a: string): boolean =>
      WILDCARD.has(a) || LOOPBACK.check(a, family(a)) || (this.#opts.localAddresses?.() ?? interfaceAddresses()).map(plain).includes(a);
    if (WILDCARD.has(listenHost)) return local;
    const listenAddresses = isIP(listenHost) ? [listenHost] : (await this.#resolve(listenHost).catch(() => [] as string[])).map(plain);
    return (a) =>
      listenAddresses.includes(a) ||
      WILDCARD.has(a) ||
      (listenAddresses.some((l) => LOOPBACK.check(l, family(l))) && LOOPBACK.check(a, family(a)));
  }
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((i): i is NonNullable<typeof i> => i !== undefined)
    .map((i) => i.address);
}
