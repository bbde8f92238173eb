// Step 3 of the wizard: core model, row-level security, VDM columns, optional starter dashboard;
// Next asks the server (dry run, nothing written) and says so while it runs.
import { field, h, notice, render } from '../../dom.js';
import { dashboardPreview } from '../../components/dashboard-layout.js';
import { VDM_LIMITS } from '../../schema-constants.js';
import { dryRun, modelHelpers, onboardingPackage, PLANNED_CONNECTION, settleChart, stepNav, tooLong, whileBusy, wire } from './common.js';

/** @param {import('../../types.js').WizardContext} ctx */
export function modelStep(ctx) {
  const { s, models } = ctx;
  const { model, typeOf, isNumber } = modelHelpers(ctx);
  const select = h('select', { name: 'coreModelId' }, models.map((m) => h('option', { value: m.modelId, selected: m.modelId === s.coreModelId }, `${m.name} (${m.modelId})`)));
  const rls = h('input', { type: 'checkbox', name: 'rls', checked: s.rls });
  const vdmName = h('input', { type: 'text', name: 'vdmName', value: s.vdmName });
  const colsBox = h('fieldset', { class: 'field' });
  const dash = h('input', { type: 'checkbox', name: 'dashboard', checked: s.dashboard });
  const dashBox = h('div', { class: 'grid2' });
  const summaryBox = h('div', { class: 'summary-box' });
  const preview = h('div', { id: 'dashboard-preview' });
  const paintPreview = () => {
    const spec = s.dashboard && s.measure && s.dimension ? onboardingPackage(s, PLANNED_CONNECTION).dashboards?.[0] : undefined;
    render(preview, spec ? [h('h3', {}, 'Preview'), dashboardPreview(spec)] : null);
  };
  const paintDash = () => {
    settleChart(ctx);
    const cols = s.columns ?? [];
    const numeric = cols.filter((c) => isNumber(c) !== false);
    /**
     * @param {string} c
     * @param {string} chosen
     */
    const option = (c, chosen) => h('option', { value: c, selected: c === chosen }, c);
    const measure = h('select', { name: 'measure', onchange: (e) => { s.measureChoice = s.measure = /** @type {HTMLSelectElement} */ (e.target).value; paintPreview(); } },
      s.measure ? null : h('option', { value: '', selected: true }, s.measureChoice ? `(${s.measureChoice} is not selected)` : '(choose)'),
      numeric.map((c) => option(c, s.measure)));
    const dimension = h('select', { name: 'dimension', onchange: (e) => { s.dimensionChoice = s.dimension = /** @type {HTMLSelectElement} */ (e.target).value; paintPreview(); } },
      s.dimension ? null : h('option', { value: '', selected: true }, s.dimensionChoice ? `(${s.dimensionChoice} is not selected)` : '(choose)'),
      cols.map((c) => option(c, s.dimension)));
    render(dashBox, s.dashboard
      ? [field('Measure (summed)', measure, Object.keys(model()?.columnTypes ?? {}).length ? 'Number columns of the core model.' : 'The core model declares no column types: pick a number column.'),
          field('By dimension', dimension)]
      : null);
    paintPreview();
  };
  const paintColumns = () => {
    const cols = model()?.columns ?? [];
    if (s.columns === null || s.columns.some((c) => !cols.includes(c))) s.columns = [...cols];
    colsBox.replaceChildren(h('legend', {}, 'Columns of the VDM'), h('div', { class: 'field-error', id: `column-${cols[0]}-error`, hidden: true }),
      cols.length
        ? h('div', { class: 'columns' }, cols.map((c) => h('label', { class: 'check' },
            h('input', { type: 'checkbox', name: 'column', id: `column-${c}`, value: c, checked: (s.columns ?? []).includes(c), onchange: (e) => {
              // Kept in the model's order, whatever the order of the clicks.
              const chosen = new Set(/** @type {HTMLInputElement} */ (e.target).checked ? [...(s.columns ?? []), c] : (s.columns ?? []).filter((x) => x !== c));
              s.columns = cols.filter((x) => chosen.has(x));
              paintDash();
            } }), c, typeOf(c) ? h('span', { class: 'type' }, ` (${typeOf(c)})`) : null)))
        : h('p', { class: 'muted' }, 'This core model lists no columns.'));
    paintDash();
  };
  select.addEventListener('change', () => {
    s.coreModelId = select.value;
    s.columns = null;
    s.measureChoice = s.dimensionChoice = null;
    paintColumns();
  });
  dash.addEventListener('change', () => {
    s.dashboard = dash.checked;
    paintDash();
  });
  paintColumns();
  const collect = () => {
    s.rls = rls.checked;
    s.vdmName = vdmName.value.trim();
  };
  const validate = () => {
    collect();
    /** @type {import('../../types.js').WizardProblem[]} */
    const problems = [];
    if (!s.coreModelId) problems.push({ name: 'coreModelId', message: 'Pick a core model.' });
    if (!s.vdmName) problems.push({ name: 'vdmName', message: 'VDM name is required.' });
    const long = tooLong(s.vdmName, VDM_LIMITS.name, 'VDM name');
    if (long) problems.push({ name: 'vdmName', message: long });
    if (!s.columns?.length) problems.push({ name: 'column', message: 'Select at least one column.' });
    if (s.dashboard) {
      if (!s.measure) problems.push({ name: 'measure', message: s.measureChoice ? `Measure: ${s.measureChoice} is no longer a selected column; select it again or choose another measure.` : 'Measure: choose a number column.' });
      else if (isNumber(s.measure) === false) problems.push({ name: 'measure', message: `Measure: ${s.measure} is a ${typeOf(s.measure)} column; a sum needs a number column.` });
      if (!s.dimension) problems.push({ name: 'dimension', message: s.dimensionChoice ? `Dimension: ${s.dimensionChoice} is no longer a selected column; select it again or choose another.` : 'Dimension: choose a column.' });
      else if (s.dimension === s.measure) problems.push({ name: 'dimension', message: 'Dimension: choose another column than the measure.' });
    }
    return problems;
  };
  const nav = stepNav(ctx, 1);
  const form = h('form', { class: 'panel', novalidate: true, 'aria-labelledby': 'step3-h' },
    h('h2', { tabindex: '-1', id: 'step3-h' }, '3. Model and dashboard'), summaryBox,
    models.length ? field('Core model', select) : notice('bad', 'No core model exists yet: add a CoreModel manifest first.'),
    h('div', { class: 'field' }, h('label', { class: 'check' }, rls, 'Row-level security')),
    field('VDM name', vdmName, `At most ${VDM_LIMITS.name.maxLength} characters.`), colsBox,
    h('div', { class: 'field' }, h('label', { class: 'check' }, dash, 'Starter dashboard (a KPI and a bar chart)')), dashBox, preview,
    nav.el);
  return wire(ctx, {
    form, summaryBox, validate, collect, step: 2,
    submit: async () => {
      // The server's own rules (a column's type, the package schema) before anything is written.
      const planned = await whileBusy({ form, button: nav.next, status: nav.busy, text: 'Checking the client with the server (nothing is written)…' }, () => dryRun(s));
      ctx.save();
      if (planned.problems.length) {
        const here = planned.problems.filter((p) => p.step === 2);
        const elsewhere = planned.problems.filter((p) => p.step !== 2);
        if (elsewhere.length) {
          ctx.go(Math.min(...elsewhere.map((p) => p.step)));
          return [];
        }
        return here;
      }
      ctx.go(3);
      return [];
    },
  });
}
