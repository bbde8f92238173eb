import { createHmac } from 'node:crypto';
import type { Notification, NotificationEvent, NotifierConfig, WebhookBody } from './types.ts';

/** `sha256=<hex of HMAC-SHA256(secret, raw body)>`: the X-Signature-256 header of a webhook. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

const BAD: ReadonlySet<NotificationEvent> = new Set(['object.failed', 'client.failed', 'prune.blocked', 'run.failed', 'git.failed', 'clientset.paused']);

/** The webhook body exactly as docs/contract/design.md writes it. */
export function webhookBody(n: Notification, event: NotificationEvent): WebhookBody {
  return {
    event,
    kind: n.kind,
    name: n.name,
    ...(n.clientId ? { clientId: n.clientId } : {}),
    ...(n.revision ? { revision: n.revision } : {}),
    message: n.message,
    ...(n.changes ? { changes: n.changes } : {}),
    at: n.at,
  };
}

function facts(n: Notification): { name: string; value: string }[] {
  const out = [{ name: 'Object', value: `${n.kind}/${n.name}` }];
  if (n.clientId) out.push({ name: 'Client', value: n.clientId });
  if (n.revision) out.push({ name: 'Revision', value: n.revision });
  const c = n.changes;
  if (c?.phase) out.push({ name: 'Phase', value: `${c.phase.from ?? '(new)'} → ${c.phase.to}` });
  if (c?.failedStep) out.push({ name: 'Failed step', value: c.failedStep });
  if (c?.steps?.length) out.push({ name: 'Steps', value: c.steps.join(', ') });
  if (c?.blocked?.length) out.push({ name: 'Kept', value: c.blocked.join(', ') });
  if (c?.run) out.push({ name: 'Rows', value: `${c.run.rowsRead} read, ${c.run.rowsWritten} written, ${c.run.rowsRejected} rejected` });
  out.push({ name: 'At', value: n.at });
  return out;
}

/** Slack incoming webhook: `text` (the fallback every client shows) and Block Kit `blocks`. */
export function slackBody(n: Notification, event: NotificationEvent): Record<string, unknown> {
  const icon = BAD.has(event) ? ':red_circle:' : ':large_green_circle:';
  return {
    text: `${icon} [${event}] ${n.message}`,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `${icon} *${event}* ${n.message}` } },
      { type: 'section', fields: facts(n).map((f) => ({ type: 'mrkdwn', text: `*${f.name}*\n${f.value}` })).slice(0, 10) },
    ],
  };
}

/** Microsoft Teams incoming webhook (Office 365 connector MessageCard). */
export function teamsBody(n: Notification, event: NotificationEvent): Record<string, unknown> {
  return {
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    summary: `[${event}] ${n.kind}/${n.name}`,
    themeColor: BAD.has(event) ? 'D70000' : '2EB886',
    title: `[${event}] ${n.kind}/${n.name}`,
    text: n.message,
    sections: [{ facts: facts(n) }],
  };
}

/** The raw body and headers one Notifier receives for one notification. */
export function render(n: Notification, event: NotificationEvent, target: NotifierConfig, env: NodeJS.ProcessEnv): { body: string; headers: Record<string, string> } {
  const payload = target.type === 'slack' ? slackBody(n, event) : target.type === 'teams' ? teamsBody(n, event) : webhookBody(n, event);
  const body = JSON.stringify(payload);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'bi-controller', 'x-bi-event': event };
  const secret = target.type === 'webhook' && target.secretEnv ? env[target.secretEnv] : undefined;
  if (secret) headers['x-signature-256'] = signature(secret, body);
  return { body, headers };
}
