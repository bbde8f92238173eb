import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { EgressPolicy } from './types.ts';

export interface EgressOptions {
  /** The controller's own listening address and port: never reachable from a pipeline. */
  self: { host: string; port: number };
  /** `BI_PIPELINE_EGRESS`: when set, only these hosts (names or addresses). */
  allow?: readonly string[];
  resolve?: (host: string) => Promise<string[]>;
}

const LOOPBACK = (a: string) => a === '::1' || a.startsWith('127.');
const LINK_LOCAL = (a: string) => a.startsWith('169.254.') || /^fe[89ab][0-9a-f]:/i.test(a) || a.startsWith('::ffff:169.254.');

/**
 * DESIGN: a pipeline never reaches the controller's own address and port, nor link-local
 * metadata addresses (169.254.0.0/16, fe80::/10); with an allow-list, only listed hosts.
 * Names are resolved and every address checked, so a DNS name pointing there is refused too.
 */
export class PipelineEgress implements EgressPolicy {
  readonly #opts: EgressOptions;
  constructor(opts: EgressOptions) {
    this.#opts = opts;
  }

  async check(host: string, port: number): Promise<void> {
    const name = host.replace(/^\[|\]$/g, '').toLowerCase();
    const allow = this.#opts.allow;
    if (allow && allow.length && !allow.some((h) => h.toLowerCase() === name)) {
      throw new Error(`egress to ${host} is not allowed (BI_PIPELINE_EGRESS lists ${allow.join(', ')})`);
    }
    const resolve = this.#opts.resolve ?? (async (h: string) => (await lookup(h, { all: true })).map((r) => r.address));
    const addresses = isIP(name) ? [name] : await resolve(name);
    const self = this.#opts.self;
    const wildcard = self.host === '0.0.0.0' || self.host === '::';
    const selfAddresses = wildcard
      ? ['127.0.0.1', '::1', ...Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address))]
      : isIP(self.host)
        ? [self.host]
        : await resolve(self.host).catch(() => [] as string[]);
    for (const a of addresses) {
      if (LINK_LOCAL(a)) throw new Error(`egress to ${host} (${a}) is not allowed: link-local addresses are refused`);
      const isSelf = port === self.port && (selfAddresses.includes(a) || (LOOPBACK(a) && selfAddresses.some(LOOPBACK)));
      if (isSelf) throw new Error(`egress to ${host}:${port} is not allowed: it is the controller's own address`);
    }
  }
}
