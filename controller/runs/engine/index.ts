/** The pipeline engine's face: what the run lifecycle constructs. */
import type { Config } from '../../config.ts';
import { NetworkEgressPolicy } from './egress.ts';

export { StreamingPipelineEngine, type StreamingEngineOptions } from './engine.ts';
export { StoreConnectionResolver, type StoreConnectionResolverOptions } from './connections.ts';
export { EgressDeniedError, NetworkEgressPolicy, type NetworkEgressPolicyOptions } from './egress.ts';

/** The egress policy of a controller: its own HOST/PORT refused, BI_PIPELINE_EGRESS as the allow-list. */
export function egressPolicyFor(config: Pick<Config, 'host' | 'port' | 'pipelineEgress'>): NetworkEgressPolicy {
  return new NetworkEgressPolicy({ listen: { host: config.host, port: config.port }, allowHosts: config.pipelineEgress });
}
