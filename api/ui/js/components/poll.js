// Repeats `tick` every `ms` while `node` is on the page (stops once the page navigates away).

/** `tick()` resolves true to keep polling, false to stop. Returns a function that stops it. */
/**
 * @param {Node} node
 * @param {number} ms
 * @param {() => Promise<boolean | void> | boolean | void} tick
 */
export function pollWhileShown(node, ms, tick) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let stopped = false;
  let seen = false;
  const step = async () => {
    if (stopped) return;
    if (node.isConnected) seen = true;
    else if (seen) return;
    let again = true;
    try {
      again = (await tick()) !== false;
    } catch {
      // a failed poll is retried on the next tick
    }
    if (again && !stopped) timer = setTimeout(step, ms);
  };
  timer = setTimeout(step, ms);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
