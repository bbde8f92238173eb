// The 4-step New client wizard (docs/contract/api.md §1, "Settings UI flow"). Each step is its own
// module (pages/wizard/); the step is in the address (`#/new?step=2`) and what was typed in this
// tab's draft (wizard/draft.js), so Back, reload, another page and a sign-in after the session
// ended all come back to it; leaving with a draft asks first (leave-guard.js).
import { call, userPath } from '../api.js';
import { confirmDialog, h, notice, render } from '../dom.js';
import { setLeaveGuard } from '../leave-guard.js';
import { STEPS } from './wizard/common.js';
import { detailsStep } from './wizard/details.js';
import { discardDraft, hasDraft, loadDraft, saveDraft } from './wizard/draft.js';
import { modelStep } from './wizard/model.js';
import { reviewStep } from './wizard/review.js';
import { sourceStep } from './wizard/source.js';

/** @type {((ctx: import('../types.js').WizardContext) => HTMLElement)[]} */
const STEP_VIEWS = [detailsStep, sourceStep, modelStep, reviewStep];
/** Counts wizard pages drawn: a page replaced by another (or started over) keeps no draft any more. */
let pages = 0;
/** @param {number} i */
const stepHref = (i) => `#/new?step=${i + 1}`;

/**
 * The wizard at the step of `query` (1 to 4; never past the furthest step reached).
 * @param {URLSearchParams} [query]
 */
export async function wizardPage(query = new URLSearchParams()) {
  /** @type {Promise<import('../types.js').Answer<import('../types.js').ApiCoreModelList>>} */
  const coreModels = call('GET', userPath('/v1/bi/admin/core-models/'));
  /** @type {Promise<import('../types.js').Answer<import('../types.js').ApiSettingsSession>>} */
  const settings = call('GET', userPath('/v1/settings/session/'));
  const [modelList, sessionRead] = await Promise.all([coreModels, settings]);
  const models = modelList.body.coreModels ?? [];
  const session = sessionRead.body;
  const restored = hasDraft();
  const page = ++pages;
  /** @type {import('../types.js').WizardContext} */
  const ctx = {
    s: loadDraft(models),
    models,
    session,
    /** The created client ends the draft: leaving then asks nothing. */
    finished: false,
    // A late answer of a replaced page (an availability check) must not write its old draft back.
    save: () => !ctx.finished && page === pages && saveDraft(ctx.s),
    go: (i) => {
      ctx.s.step = i;
      ctx.s.reached = Math.max(ctx.s.reached, i);
      ctx.save();
      location.hash = stepHref(i);
    },
    done: () => {
      ctx.finished = true;
    },
  };
  const asked = Number(query.get('step'));
  const step = Math.min(Number.isInteger(asked) && asked >= 1 && asked <= STEPS.length ? asked - 1 : ctx.s.step, ctx.s.reached);
  ctx.s.step = step;
  // The address names the step shown (a bare #/new, or a step not reached yet, is corrected in place).
  if (location.hash !== stepHref(step)) history.replaceState(null, '', stepHref(step));

  const root = h('section', { 'aria-labelledby': 'wizard-h' });
  const stepper = h('ol', { class: 'stepper', 'aria-label': 'Steps' }, STEPS.map((label, j) => h('li', {
    class: [j < step ? 'done' : '', ctx.s.serverProblems[j]?.length && j !== step ? 'has-error' : ''].join(' ').trim(),
    'aria-current': j === step ? 'step' : null,
  }, label)));
  const startOver = h('button', { type: 'button', class: 'secondary', id: 'discard-draft' }, 'Start over');
  startOver.addEventListener('click', async () => {
    const yes = await confirmDialog({ title: 'Start over?', text: 'Everything typed in this wizard is discarded.', confirmLabel: 'Discard the draft', id: 'discard-dialog' });
    if (!yes) return;
    ctx.finished = true;
    discardDraft();
    // A new page from an empty draft (the same address draws step 1 again).
    location.hash = stepHref(0);
    if (step === 0) window.dispatchEvent(new HashChangeEvent('hashchange'));
  });
  const draftNote = restored ? notice('info', h('span', { id: 'draft-note' }, 'Your draft in this tab is kept as you type (the password only until a reload). '), startOver) : null;
  const body = STEP_VIEWS[step](ctx);
  // From step 2 on, the step's heading takes the focus when the page is shown (app.js focusPage).
  if (step > 0) body.querySelector('h2')?.setAttribute('autofocus', '');
  render(root, h('h1', { id: 'wizard-h' }, 'New client'), stepper, draftNote, body);

  setLeaveGuard({
    covers: (page) => page === 'new',
    dirty: () => !ctx.finished && hasDraft(),
    ask: () => confirmDialog({
      id: 'leave-wizard',
      title: 'Leave the new client?',
      text: `What you typed stays as a draft in this tab: New client opens it again${ctx.s.password ? ' (the password only until the tab is reloaded)' : ''}. Nothing was created yet.`,
      confirmLabel: 'Leave',
      cancelLabel: 'Stay',
      danger: false,
    }),
  });
  return root;
}
