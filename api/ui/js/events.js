import { getSession } from './api.js';

/**
 * Subscribes to the reconciler's server-sent events (`GET /v1/reconciler/events`) with fetch and
 * a stream reader: EventSource cannot send the CTN header. `ready` resolves once the server has
 * accepted the subscription (true) or refused it (false), so callers subscribe before they write.
 */
/** @param {(event: Record<string, unknown>) => void} onEvent */
export function subscribe(onEvent) {
  const controller = new AbortController();
  /** @type {(accepted: boolean) => void} */
  let settle = () => {};
  /** @type {Promise<boolean>} */
  const ready = new Promise((resolve) => (settle = resolve));
  (async () => {
    try {
      const s = getSession();
      const res = await fetch('/v1/reconciler/events', {
        headers: { accept: 'text/event-stream', ...(s ? { CTN: s.csrfToken } : {}) },
        credentials: 'same-origin',
        signal: controller.signal,
      });
      if (!res.ok || !res.body) {
        settle(false);
        return;
      }
      settle(true);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut;
        while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
          const chunk = buffer.slice(0, cut);
          buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, '');
          const data = chunk
            .split(/\r?\n/)
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).replace(/^ /, ''))
            .join('\n');
          if (!data) continue;
          try {
            onEvent(JSON.parse(data));
          } catch {
            // not JSON: a comment or keep-alive
          }
        }
      }
    } catch {
      settle(false);
    }
  })();
  return { ready, close: () => controller.abort() };
}
