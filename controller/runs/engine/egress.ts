import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { EgressPolicy, ResolvedAddress } from '../types.ts';

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

/** Every address of a name, as the system resolves it (IPv6 and IPv4, in its order). */
export const lookupAll: LookupAll = (host) => dnsLookup(host, { all: true, verbatim: true });

const WILDCARD = new Set(['0.0.0.0', '::', '']);

/** The eight 16-bit words of an IPv6 address (zone, brackets and embedded dotted quads allowed); undefined when it is not one. */
function ipv6Words(address: string): number[] | undefined {
  let a = address.replace(/%.*$/, '');
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (quad) {
    const o = quad.slice(1).map(Number) as [number, number, number, number];
    if (o.some((x) => x > 255)) return undefined;
    a = `${a.slice(0, quad.index)}${((o[0] << 8) | o[1]).toString(16)}:${((o[2] << 8) | o[3]).toString(16)}`;
  }
  const halves = a.split('::');
  if (halves.length > 2) return undefined;
  const part = (s: string | undefined): number[] => (s ? s.split(':').map((w) => (/^[0-9a-f]{1,4}$/i.test(w) ? parseInt(w, 16) : Number.NaN)) : []);
  const head = part(halves[0]);
  const tail = part(halves[1]);
  const fill = 8 - head.length - tail.length;
  if (halves.length === 1 ? fill !== 0 : fill < 1) return undefined;
  const words = [...head, ...Array<number>(halves.length === 1 ? 0 : fill).fill(0), ...tail];
  return words.some((w) => Number.isNaN(w)) ? undefined : words;
}

const quadOf = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/** The IPv4 address an IPv6 address carries (mapped `::ffff:a.b.c.d`, also in hex, translated, compatible `::a.b.c.d`, NAT64 64:ff9b::/96, 6to4 2002::/16). */
function embeddedIpv4(w: number[]): string | undefined {
  const [w0, w1, w2, w3, w4, w5, w6, w7] = w as [number, number, number, number, number, number, number, number];
  const zeroTo = (n: number): boolean => w.slice(0, n).every((x) => x === 0);
  if (zeroTo(5) && w5 === 0xffff) return quadOf(w6, w7); // ::ffff:0:0/96 mapped
  if (zeroTo(4) && w4 === 0xffff && w5 === 0) return quadOf(w6, w7); // ::ffff:0:0:0/96 translated
  if (zeroTo(6) && (w6 !== 0 || w7 > 1)) return quadOf(w6, w7); // ::/96 compatible (not :: or ::1)
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0) return quadOf(w6, w7); // NAT64
  if (w0 === 0x2002) return quadOf(w1, w2); // 6to4
  return undefined;
}

/** The IPv4 address an address is or carries (IPv4-mapped IPv6, in any notation); the address itself otherwise, lowercased, brackets removed. */
function plain(address: string): string {
  const a = address.replace(/^\[|\]$/g, '').toLowerCase();
  if (isIP(a) !== 6) return a;
  const w = ipv6Words(a);
  return w && w.slice(0, 5).every((x) => x === 0) && w[5] === 0xffff ? quadOf(w[6] as number, w[7] as number) : a;
}

export type AddressClass = 'link-local' | 'loopback' | 'private' | 'shared (CGNAT)' | 'this-network' | 'unique-local' | 'site-local';

function classifyIpv4(a: string): AddressClass | undefined {
  const [o0, o1] = a.split('.').map(Number) as [number, number];
  if (o0 === 127) return 'loopback';
  if (o0 === 169 && o1 === 254) return 'link-local';
  if (o0 === 10 || (o0 === 172 && (o1 & 0xf0) === 16) || (o0 === 192 && o1 === 168)) return 'private';
  if (o0 === 100 && (o1 & 0xc0) === 64) return 'shared (CGNAT)';
  if (o0 === 0) return 'this-network';
  return undefined;
}

/**
 * What kind of internal address `address` is (undefined: none): loopback 127/8 and ::1,
 * RFC 1918, link-local 169.254/16 and fe80::/10, CGNAT 100.64/10, 0/8 and ::, ULA fc00::/7,
 * site-local fec0::/10, and every IPv6 form that carries one of those IPv4 addresses.
 */
export function internalClass(address: string): AddressClass | undefined {
  const a = address.replace(/^\[|\]$/g, '').toLowerCase();
  const version = isIP(a.replace(/%.*$/, ''));
  if (version === 4) return classifyIpv4(a);
  if (version !== 6) return undefined;
  const w = ipv6Words(a);
  if (!w) return undefined;
  if (w.slice(0, 7).every((x) => x === 0)) return w[7] === 1 ? 'loopback' : w[7] === 0 ? 'this-network' : classifyIpv4(quadOf(0, w[7] as number));
  const v4 = embeddedIpv4(w);
  if (v4) return classifyIpv4(v4);
  const w0 = w[0] as number;
  if ((w0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((w0 & 0xfe00) === 0xfc00) return 'unique-local';
  if ((w0 & 0xffc0) === 0xfec0) return 'site-local';
  return undefined;
}

const isLoopback = (a: string): boolean => internalClass(a) === 'loopback';

/**
 * Where a pipeline may connect: never a link-local address (169.254.0.0/16, fe80::/10: cloud
 * metadata), never the controller's own listening address and port (a wildcard listener counts as
 * every local address), and only `allowHosts` when that list is set. Host names are resolved and
 * every address is checked. Tenant endpoints (`endpoint`: api and s3 sources) are refused any
 * internal address too, unless `allowHosts` names the host.
 */
export class NetworkEgressPolicy implements EgressPolicy {
  readonly #opts: NetworkEgressPolicyOptions;
  readonly #lookup: LookupAll;

  constructor(opts: NetworkEgressPolicyOptions) {
    this.#opts = opts;
    this.#lookup = opts.lookup ?? lookupAll;
  }

  async check(host: string, port: number): Promise<void> {
    await this.#addresses(host, port, false);
  }

  async endpoint(host: string, port: number): Promise<ResolvedAddress[]> {
    return this.#addresses(host, port, true);
  }

  async #addresses(host: string, port: number, tenant: boolean): Promise<ResolvedAddress[]> {
    const name = plain(host);
    const allow = (this.#opts.allowHosts ?? []).map((h) => h.trim().toLowerCase()).filter(Boolean);
    const listed = allow.includes(name) || allow.includes(`${name}:${port}`) || allow.includes(`[${name}]:${port}`);
    if (allow.length > 0 && !listed) {
      throw new EgressDeniedError(`Egress to ${host}:${port} is not allowed: the host is not listed in BI_PIPELINE_EGRESS`);
    }
    const bare = host.replace(/^\[|\]$/g, '');
    const resolved = isIP(bare) ? [{ address: bare, family: isIP(bare) }] : await this.#resolve(name);
    const own = await this.#ownAddresses();
    for (const { address: raw } of resolved) {
      const address = plain(raw);
      const kind = internalClass(address);
      if (kind === 'link-local') {
        throw new EgressDeniedError(`Egress to ${host}:${port} is not allowed: ${address} is a link-local (metadata) address`);
      }
      if (port === this.#opts.listen.port && own(address)) {
        throw new EgressDeniedError(`Egress to ${host}:${port} is not allowed: it is the controller's own listening address`);
      }
      if (tenant && kind && !listed) {
        throw new EgressDeniedError(`Egress to ${host}:${port} is not allowed: ${address} is an internal (${kind}) address; list the host in BI_PIPELINE_EGRESS to allow it`);
      }
    }
    return resolved.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
  }

  async #resolve(name: string): Promise<{ address: string; family: number }[]> {
    try {
      const found = await this.#lookup(name);
      if (found.length === 0) throw new Error('no address');
      return found;
    } catch (err) {
      throw new Error(`Host ${name} could not be resolved: ${(err as Error).message}`);
    }
  }

  /** Whether an address reaches the controller's listener. */
  async #ownAddresses(): Promise<(address: string) => boolean> {
    const listenHost = plain(this.#opts.listen.host);
    const local = (a: string): boolean => WILDCARD.has(a) || isLoopback(a) || (this.#opts.localAddresses?.() ?? interfaceAddresses()).map(plain).includes(a);
    if (WILDCARD.has(listenHost)) return local;
    const listenAddresses = isIP(listenHost) ? [listenHost] : (await this.#resolve(listenHost).catch(() => [])).map((a) => plain(a.address));
    return (a) => listenAddresses.includes(a) || WILDCARD.has(a) || (listenAddresses.some(isLoopback) && isLoopback(a));
  }
}

function interfaceAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((i): i is NonNullable<typeof i> => i !== undefined)
    .map((i) => i.address);
}
