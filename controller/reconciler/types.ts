// The reconciler's shapes live in the contract layer (every layer may import them).
export * from '../contract.ts';
