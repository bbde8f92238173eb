// Step 1 of the wizard: client ID (unique, checked with the server as it is typed), display name, description.
import { call, errorText, userPath } from '../../api.js';
import { debounce, field, h, notice, render } from '../../dom.js';
import { CLIENT_LIMITS, VDM_LIMITS } from '../../schema-constants.js';
import { isClientId } from '../../schema-rules.js';
import { stepNav, tooLong, whileBusy, wire } from './common.js';

/** What the registry says of a client ID: free, taken (ACTIVE or held) or retry (FAILED / DELETED may be created again). */
/**
 * @param {string} clientId
 * @returns {Promise<{state: 'free' | 'retry' | 'taken', status?: string, name?: string}>}
 */
async function lookUp(clientId) {
  /** @type {import('../../types.js').Answer<import('../../types.js').ApiClientRead>} */
  const r = await call('GET', userPath(`/v1/bi/admin/clients/${encodeURIComponent(clientId)}/`), { expect: [200, 404] });
  if (r.status === 404) return { state: 'free' };
  const status = r.body.client?.status;
  return { state: status === 'FAILED' || status === 'DELETED' ? 'retry' : 'taken', status, name: r.body.client?.clientName };
}

/** @param {import('../../types.js').WizardContext} ctx */
export function detailsStep(ctx) {
  const { s } = ctx;
  const id = h('input', { type: 'text', name: 'clientId', value: s.clientId, required: true, autocomplete: 'off', spellcheck: 'false', maxlength: '64', 'aria-describedby': 'client-id-status' });
  const idStatus = h('div', { id: 'client-id-status', 'aria-live': 'polite' });
  const name = h('input', { type: 'text', name: 'clientName', value: s.clientName, required: true });
  const desc = h('textarea', { name: 'description' }, s.description);
  const summaryBox = h('div', { class: 'summary-box' });
  /** @type {Awaited<ReturnType<typeof lookUp>> | null} */
  let taken = null;
  const paint = () => {
    /** @type {Record<string, HTMLElement | null>} */
    const msgs = {
      empty: null,
      invalid: null,
      // The check runs on the server: said at once, so a slow answer never looks like nothing.
      checking: h('span', { class: 'loading' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), ` Checking whether ${s.clientId} is free…`),
      free: notice('ok', `${s.clientId} is available.`),
      retry: notice('warn', `${s.clientId} exists as a failed or deleted client; creating it again is allowed.`),
      taken: notice('bad', `${s.clientId} is taken${taken?.name ? ` by ${taken.name}` : ''}${taken?.status ? ` (${taken.status})` : ''}: choose another client ID.`),
      error: notice('warn', 'Could not check the client ID; Next checks it again.'),
    };
    render(idStatus, msgs[s.idState] ?? null);
    idStatus.dataset.state = s.idState;
    if (s.idState === 'checking') idStatus.setAttribute('aria-busy', 'true');
    else idStatus.removeAttribute('aria-busy');
  };
  const check = debounce(async () => {
    const want = s.clientId;
    try {
      const found = await lookUp(want);
      if (want !== s.clientId) return;
      taken = found;
      s.idState = found.state;
    } catch {
      if (want !== s.clientId) return;
      s.idState = 'error';
    }
    paint();
    ctx.save();
    id.dispatchEvent(new Event('change', { bubbles: true }));
  }, 250);
  const typed = () => {
    s.clientId = id.value.trim().toUpperCase();
    s.idState = !s.clientId ? 'empty' : isClientId(s.clientId) ? 'checking' : 'invalid';
    paint();
    if (s.idState === 'checking') check();
  };
  id.addEventListener('input', typed);
  const collect = () => {
    s.clientName = name.value.trim();
    s.description = desc.value.trim();
  };
  const validate = () => {
    collect();
    /** @type {import('../../types.js').WizardProblem[]} */
    const problems = [];
    /** @type {string | undefined} */
    const idProblem = /** @type {Record<string, string>} */ ({
      empty: 'Client ID is required.',
      invalid: 'Client ID: use 1 to 64 letters, digits, "_" or "-", starting with a letter or digit.',
      taken: `Client ID: ${s.clientId} already exists.`,
      checking: 'Client ID: wait for the availability check.',
    })[s.idState];
    if (idProblem) problems.push({ name: 'clientId', message: idProblem });
    if (!s.clientName) problems.push({ name: 'clientName', message: 'Display name is required.' });
    const long = tooLong(s.clientName, CLIENT_LIMITS.clientName, 'Display name');
    if (long) problems.push({ name: 'clientName', message: long });
    const longDesc = tooLong(s.description, CLIENT_LIMITS.description, 'Description');
    if (longDesc) problems.push({ name: 'description', message: longDesc });
    return problems;
  };
  const nav = stepNav(ctx, null);
  const form = h('form', { class: 'panel', novalidate: true, 'aria-labelledby': 'step1-h' },
    h('h2', { tabindex: '-1', id: 'step1-h' }, '1. Client details'), summaryBox,
    field('Client ID', id, 'Unique; uppercased automatically; checked as you type.'), idStatus,
    field('Display name', name, `At most ${CLIENT_LIMITS.clientName.maxLength} characters.`),
    field('Description (optional)', desc, `At most ${CLIENT_LIMITS.description.maxLength} characters.`),
    nav.el);
  // A restored draft: its ID is checked again (it may have been taken meanwhile).
  if (s.clientId && isClientId(s.clientId)) typed();
  else paint();
  return wire(ctx, {
    form, summaryBox, validate, collect, step: 0,
    submit: async () => {
      if (s.idState === 'error') {
        // The check could not run: ask again before leaving the step.
        try {
          const found = await whileBusy({ form, button: nav.next, status: nav.busy, text: `Checking whether ${s.clientId} is free…` }, () => lookUp(s.clientId));
          taken = found;
          s.idState = found.state;
        } catch (err) {
          return [{ name: 'clientId', message: `Client ID could not be checked: ${errorText(err)}` }];
        }
        paint();
        if (s.idState === 'taken') return [{ name: 'clientId', message: `Client ID: ${s.clientId} already exists.` }];
      }
      if (!s.vdmName) s.vdmName = `${s.clientName} data`.slice(0, VDM_LIMITS.name.maxLength);
      ctx.go(1);
      return [];
    },
  });
}
