/** Polls `check` until it returns a truthy value (real file-system events need real time), bounded. */
export async function waitFor<T>(check: () => T | Promise<T>, opts: { timeoutMs?: number; what?: string } = {}): Promise<T> {
  const deadline = Date.now() + (opts.timeoutMs ?? 5000);
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${opts.what ?? 'condition'}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
