// What the wizard's steps share: the checks of a step's form, the package the steps build, the
// server's dry run, and the visible busy state of a check that goes to the server.
import { ApiError, call, errorText, userPath } from '../../api.js';
import { h, render, showProblems } from '../../dom.js';

/** @typedef {import('../../types.js').WizardContext} WizardContext */
/** @typedef {import('../../types.js').WizardDraft} WizardDraft */
/** @typedef {import('../../types.js').WizardProblem} WizardProblem */

export const STEPS = ['Client details', 'Data source', 'Model and dashboard', 'Review and create'];
const MEASURE_HINT = /revenue|amount|total|sales|quantity|qty|count|price|value/i;
const NUMBER_TYPES = new Set(['number', 'numeric', 'integer', 'int', 'bigint', 'decimal', 'float', 'double', 'real']);
/** A connection ID of the right shape that is never issued: the dry run's stand-in for the connection Create writes. */
export const PLANNED_CONNECTION = 'D0000A00000';

/** `maxLength` problems of the schema's limits: the text a field gets when it is too long. */
/**
 * @param {string} value
 * @param {{maxLength?: number} | undefined} limit
 * @param {string} label
 */
export function tooLong(value, limit, label) {
  return limit?.maxLength !== undefined && value.length > limit.maxLength ? `${label} must be at most ${limit.maxLength} characters (it has ${value.length}).` : null;
}

/** Which step and field a server problem (`clientName must be ...`, `dashboards[0]...`) belongs to. */
/**
 * @param {string} path
 * @returns {{step: number, name: string | null}}
 */
function placeOf(path) {
  if (/^(clientId|clientName|description)$/.test(path)) return { step: 0, name: path };
  if (/^vdm\[0\]\.name$/.test(path)) return { step: 2, name: 'vdmName' };
  if (/^coreModelId$/.test(path)) return { step: 2, name: 'coreModelId' };
  if (/^dashboards/.test(path)) return { step: 2, name: 'measure' };
  if (/^vdm/.test(path)) return { step: 2, name: 'column' };
  return { step: 3, name: null };
}

/** The core model chosen and what it says of a column's type (null: not typed). */
/** @param {WizardContext} ctx */
export function modelHelpers(ctx) {
  const model = () => ctx.models.find((m) => m.modelId === ctx.s.coreModelId);
  /** @param {string} col */
  const typeOf = (col) => model()?.columnTypes?.[col];
  /** @param {string} col */
  const isNumber = (col) => {
    const t = typeOf(col);
    return t === undefined ? null : NUMBER_TYPES.has(t);
  };
  return { model, typeOf, isNumber };
}

/** The chosen measure and dimension, kept in step with the selected columns (never changed silently). */
/** @param {WizardContext} ctx */
export function settleChart(ctx) {
  const { s } = ctx;
  const { isNumber } = modelHelpers(ctx);
  const cols = s.columns ?? [];
  const measures = cols.filter((c) => isNumber(c) !== false);
  if (s.measureChoice === null) s.measureChoice = measures.find((c) => MEASURE_HINT.test(c)) ?? measures[measures.length - 1] ?? '';
  s.measure = cols.includes(s.measureChoice) ? s.measureChoice : '';
  if (s.dimensionChoice === null) s.dimensionChoice = cols.find((c) => c !== s.measure && isNumber(c) !== true) ?? cols.find((c) => c !== s.measure) ?? '';
  s.dimension = cols.includes(s.dimensionChoice) ? s.dimensionChoice : '';
}

/**
 * @param {WizardDraft} s
 * @returns {import('../../types.js').ApiConnectionRequest}
 */
export function connectionBody(s) {
  return {
    vendor: /** @type {import('../../types.js').ApiConnectionRequest['vendor']} */ (s.vendor),
    ...(s.vendor === 'SNOWFLAKE' ? { accountUrl: s.accountUrl, warehouse: s.warehouse } : { host: s.host, port: s.port ? Number(s.port) : undefined }),
    database: s.database, schema: s.schema, username: s.username,
    ...(s.password ? { password: s.password } : s.secretRef ? { secretRef: s.secretRef } : {}),
  };
}

/** What a test result is tied to: every value sent, the password included (kept in memory only). */
/** @param {WizardDraft} s */
export const testKey = (s) => JSON.stringify(connectionBody(s));
/**
 * @param {WizardDraft} s
 * @returns {s is WizardDraft & {tested: NonNullable<WizardDraft['tested']>}}
 */
export const testedOk = (s) => s.tested !== null && s.tested.key === testKey(s) && s.tested.result.connected === true;

/**
 * @param {WizardDraft} s
 * @param {string} connectionId
 */
export function onboardingPackage(s, connectionId) {
  return {
    clientId: s.clientId,
    clientName: s.clientName,
    ...(s.description ? { description: s.description } : {}),
    connectionId,
    coreModelId: s.coreModelId,
    security: { enabled: s.rls },
    vdm: [{ name: s.vdmName, selectedColumns: s.columns, securityEnabled: s.rls }],
    ...(s.dashboard
      ? {
          dashboards: [{
            name: `${s.clientName} overview`.slice(0, 200),
            sections: [{
              name: 'Overview',
              topSection: true,
              charts: [
                { title: `Total ${s.measure}`, type: 'kpi', measures: [{ field: s.measure, aggregation: 'sum' }], dimensions: [] },
                { title: `${s.measure} by ${s.dimension}`, type: 'bar', measures: [{ field: s.measure, aggregation: 'sum' }], dimensions: [s.dimension] },
              ],
            }],
          }],
        }
      : {}),
  };
}

/**
 * The package checked by the server (`?dryRun=true`: nothing written) with a stand-in for the
 * connection Create writes. Problems are filed under their step (s.serverProblems).
 * @param {WizardDraft} s
 * @returns {Promise<{problems: import('../../types.js').WizardServerProblem[], error?: string}>}
 */
export async function dryRun(s) {
  for (const k of Object.keys(s.serverProblems)) s.serverProblems[Number(k)] = [];
  /** @type {import('../../types.js').ProblemText[]} */
  let problems = [];
  try {
    /** @type {import('../../types.js').Answer<import('../../types.js').ErrorAnswer | null>} */
    const r = await call('POST', `${userPath('/v1/sdk/client/onboard/')}?dryRun=true`, { body: onboardingPackage(s, s.connectionId ?? PLANNED_CONNECTION), expect: [200, 400, 409, 422] });
    if (r.status !== 200) problems = new ApiError(r.status, r.body).problems;
  } catch (err) {
    // The check itself failed (network, 5xx): Create reports it at step 4.
    return { problems: [], error: errorText(err) };
  }
  const placed = problems.map((p) => ({ ...placeOf(p.path), message: p.text }));
  for (const p of placed) s.serverProblems[p.step].push(p);
  return { problems: placed };
}

/**
 * A check that goes to the server, shown while it runs (a slow network must not look like a dead
 * button): the form is aria-busy, the button disabled, and `text` is said in the status line.
 * @template T
 * @param {{form: HTMLElement, button?: HTMLButtonElement | null, status?: HTMLElement | null, text: string}} busy
 * @param {() => Promise<T>} work
 * @returns {Promise<T>}
 */
export async function whileBusy({ form, button, status, text }, work) {
  form.setAttribute('aria-busy', 'true');
  if (button) button.disabled = true;
  const shown = status ? render(status, h('span', { class: 'loading', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), ` ${text}`)) : null;
  if (status) status.dataset.busy = 'true';
  try {
    return await work();
  } finally {
    form.removeAttribute('aria-busy');
    if (button) button.disabled = false;
    if (shown && status?.dataset.busy) {
      render(status);
      delete status.dataset.busy;
    }
  }
}

/** The step's Back and Next buttons (`back`: the previous step, null on the first) and the busy line of Next. */
/**
 * @param {WizardContext} ctx
 * @param {number | null} back
 */
export function stepNav(ctx, back) {
  const busy = h('div', { class: 'busy-line', id: 'step-busy', 'aria-live': 'polite' });
  const next = h('button', { type: 'submit', id: 'next' }, 'Next');
  const el = h('div', {},
    h('div', { class: 'actions' },
      back !== null ? h('button', { type: 'button', class: 'secondary', id: 'back', onclick: () => ctx.go(back) }, 'Back') : null,
      next),
    busy);
  return { el, next, busy };
}

/**
 * Wires a step's form: `validate()` → [{name, message}] (name: a control's name, or null for the
 * step); problems show at their fields with a summary; once shown they are checked again on
 * every change, so a fixed one clears at once. `submit()` runs when there is none left. Every
 * change is kept in the draft (`collect()` then save).
 * @param {WizardContext} ctx
 * @param {{form: HTMLFormElement, summaryBox: HTMLElement, validate: () => WizardProblem[], submit: () => Promise<WizardProblem[]>, step: number, collect?: () => void}} step
 */
export function wire(ctx, { form, summaryBox, validate, submit, step, collect }) {
  const { s } = ctx;
  let shown = false;
  const controls = () => [.../** @type {NodeListOf<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>} */ (form.querySelectorAll('input, select, textarea'))].filter((c) => c.name);
  /** @param {string | null} name */
  const controlOf = (name) => (name ? /** @type {HTMLElement | null} */ (form.querySelector(`[name="${name}"]`)) : null);
  /**
   * @param {WizardProblem[]} problems
   * @param {boolean} focus
   */
  const paint = (problems, focus) => {
    const list = problems.map((p) => ({ control: controlOf(p.name), message: p.message }));
    const summary = showProblems(controls(), list);
    render(summaryBox, summary);
    shown = Boolean(summary);
    if (summary && focus) summary.focus();
  };
  const recheck = () => {
    if (!shown) return;
    paint(validate(), false);
  };
  const keep = () => {
    collect?.();
    ctx.save();
  };
  form.addEventListener('input', () => {
    keep();
    recheck();
  });
  form.addEventListener('change', () => {
    keep();
    recheck();
  });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (form.getAttribute('aria-busy') === 'true') return;
    s.serverProblems[step] = [];
    const problems = validate();
    if (problems.length) return paint(problems, true);
    paint([], false);
    const more = await submit();
    if (more?.length) paint(more, true);
  });
  // Problems the server found for this step (the dry run at a later step) show at once.
  if (s.serverProblems[step]?.length) queueMicrotask(() => paint([...validate(), ...s.serverProblems[step]], false));
  return form;
}
