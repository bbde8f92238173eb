// Step 4 of the wizard: review, then create with live progress (checked by the server once more first).
import { errorText } from '../../api.js';
import { h, notice, render } from '../../dom.js';
import { clientSteps, resultPanel, runOnboarding } from '../../onboarding.js';
import { Progress } from '../../progress.js';
import { connectionBody, dryRun, modelHelpers, onboardingPackage, PLANNED_CONNECTION, testedOk, testKey, whileBusy } from './common.js';
import { discardDraft } from './draft.js';

/** @param {import('../../types.js').WizardContext} ctx */
export function reviewStep(ctx) {
  const { s } = ctx;
  const c = connectionBody(s);
  const m = modelHelpers(ctx).model();
  const testText = testedOk(s) ? s.tested.result.message : s.tested && s.tested.key === testKey(s) ? `failed: ${s.tested.result.message} (continuing without a successful test)` : 'not run for these values (continuing without a successful test)';
  const rows = [
    ['Client', `${s.clientId} — ${s.clientName}`],
    ['Description', s.description || '—'],
    ['Data source', `${c.vendor} ${c.vendor === 'SNOWFLAKE' ? c.accountUrl : `${c.host}:${c.port ?? 5432}`} / ${c.database}.${c.schema} as ${c.username}`],
    ['Credentials', c.password ? 'password typed (stored encrypted)' : c.secretRef ? `stored (${c.secretRef})` : 'none (a reload forgets a typed password: go back to Data source to type it again)'],
    ['Test Connection', testText],
    ['Core model', m ? `${m.name} (${m.modelId})` : s.coreModelId],
    ['Row-level security', s.rls ? 'on' : 'off'],
    ['VDM', `${s.vdmName}: ${(s.columns ?? []).join(', ')}`],
    ['Starter dashboard', s.dashboard ? `yes (sum of ${s.measure} by ${s.dimension})` : 'no'],
  ];
  const progressBox = h('div', { id: 'progress' });
  const resultBox = h('div', { id: 'create-result' });
  const busy = h('div', { class: 'busy-line', id: 'step-busy', 'aria-live': 'polite' });
  const create = h('button', { type: 'submit', id: 'create' }, 'Create client');
  const back = h('button', { type: 'button', class: 'secondary', id: 'back', onclick: () => ctx.go(2) }, 'Back');
  const form = h('form', { class: 'panel', novalidate: true, 'aria-labelledby': 'step4-h' },
    h('h2', { tabindex: '-1', id: 'step4-h' }, '4. Review and create'),
    s.serverProblems[3].length ? notice('bad', s.serverProblems[3].map((p) => p.message).join(' ')) : null,
    h('dl', { class: 'facts', id: 'review' }, rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    h('div', { class: 'actions' }, back, create),
    busy,
    progressBox);
  /** @param {HTMLElement | null} focusEl */
  const finish = (focusEl) => {
    create.disabled = false;
    back.disabled = false;
    (focusEl ?? create).focus();
  };
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (form.getAttribute('aria-busy') === 'true') return;
    back.disabled = true;
    render(resultBox);
    // Checked again before anything is written: a problem goes back to its step, no connection is left behind.
    const planned = await whileBusy({ form, button: create, status: busy, text: 'Checking the client with the server before writing…' }, () => dryRun(s));
    if (planned.problems.length) {
      ctx.save();
      ctx.go(Math.min(...planned.problems.map((p) => p.step)));
      return;
    }
    create.disabled = true;
    const progress = new Progress(clientSteps({ withConnection: true, withDashboards: s.dashboard }));
    render(progressBox, h('h3', {}, 'Progress'), progress.el);
    // `owner`: a retry (even after a lost answer) updates the connection written for this client instead of adding one.
    const connection = { ...connectionBody(s), name: `${s.clientName} warehouse`, description: `Data source of client ${s.clientId}`, owner: s.clientId, ...(s.connectionId ? { connectionId: s.connectionId } : {}) };
    const outcome = await runOnboarding({ connection, pkg: onboardingPackage(s, PLANNED_CONNECTION), progress });
    if (outcome.connectionId) {
      s.connectionId = outcome.connectionId;
      s.secretRef = outcome.secretRef ?? s.secretRef;
      s.password = '';
      // The stored secret is what the next attempt sends: the test stays valid for it.
      if (s.tested) s.tested = { ...s.tested, key: testKey(s) };
    }
    progressBox.dataset.live = String(outcome.live);
    try {
      render(resultBox, await resultPanel(outcome, s.clientId));
    } catch (err) {
      render(resultBox, notice('bad', errorText(err)));
    }
    const heading = resultBox.querySelector('h2');
    heading?.setAttribute('tabindex', '-1');
    if (outcome.status === 201) {
      // Created: the draft is done (the page stays as it is; New client starts afresh).
      discardDraft();
      ctx.done();
      heading?.focus();
      return;
    }
    ctx.save();
    create.textContent = 'Try again';
    finish(heading);
  });
  return h('div', {}, form, resultBox);
}
