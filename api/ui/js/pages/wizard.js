import { ApiError, call, errorText, getSession, userPath } from '../api.js';
import { debounce, field, h, notice, render, showProblems } from '../dom.js';
import { clientSteps, resultPanel, runOnboarding } from '../onboarding.js';
import { dashboardPreview } from '../components/dashboard-layout.js';
import { Progress } from '../progress.js';
import { CLIENT_LIMITS, CONNECTION_LIMITS, VDM_LIMITS, VENDORS } from '../schema-constants.js';
import { isClientId } from '../schema-rules.js';

const STEPS = ['Client details', 'Data source', 'Model and dashboard', 'Review and create'];
const MEASURE_HINT = /revenue|amount|total|sales|quantity|qty|count|price|value/i;
const NUMBER_TYPES = new Set(['number', 'numeric', 'integer', 'int', 'bigint', 'decimal', 'float', 'double', 'real']);
/** A connection ID of the right shape that is never issued: the dry run's stand-in for the connection Create writes. */
const PLANNED_CONNECTION = 'D0000A00000';

/** `maxLength` problems of the schema's limits: the text a field gets when it is too long. */
function tooLong(value, limit, label) {
  return limit?.maxLength !== undefined && value.length > limit.maxLength ? `${label} must be at most ${limit.maxLength} characters (it has ${value.length}).` : null;
}

/** Which step and field a server problem (`clientName must be ...`, `dashboards[0]...`) belongs to. */
function placeOf(path) {
  if (/^(clientId|clientName|description)$/.test(path)) return { step: 0, name: path };
  if (/^vdm\[0\]\.name$/.test(path)) return { step: 2, name: 'vdmName' };
  if (/^coreModelId$/.test(path)) return { step: 2, name: 'coreModelId' };
  if (/^dashboards/.test(path)) return { step: 2, name: 'measure' };
  if (/^vdm/.test(path)) return { step: 2, name: 'column' };
  return { step: 3, name: null };
}

/** The 4-step New client wizard (docs/contract/api.md §1, "Settings UI flow"). */
export async function wizardPage() {
  const [models, session] = await Promise.all([
    call('GET', userPath('/v1/bi/admin/core-models/')).then((r) => r.body.coreModels ?? []),
    call('GET', userPath('/v1/settings/session/')).then((r) => r.body),
  ]);
  const s = {
    step: 0,
    clientId: '', clientName: '', description: '', idState: 'empty',
    vendor: 'POSTGRESQL', accountUrl: '', host: '', port: '5432', warehouse: '', database: '', schema: '', username: '', password: '',
    /** The last Test Connection: the values it tested (`key`) and its answer; any change of a value voids it. */
    tested: null, ackNoTest: false,
    coreModelId: models[0]?.modelId ?? '', rls: true, vdmName: '', columns: null, dashboard: true,
    /** The measure and dimension as chosen: kept when their column is unchecked and restored when it comes back. */
    measure: '', dimension: '', measureChoice: null, dimensionChoice: null,
    connectionId: undefined, secretRef: undefined,
    /** Problems the server found for a step (dry run): shown when the step is shown. */
    serverProblems: { 0: [], 1: [], 2: [], 3: [] },
  };
  const root = h('section', { 'aria-labelledby': 'wizard-h' });
  const stepper = h('ol', { class: 'stepper', 'aria-label': 'Steps' });
  const body = h('div');
  render(root, h('h1', { id: 'wizard-h' }, 'New client'), stepper, body);

  const model = () => models.find((m) => m.modelId === s.coreModelId);
  const typeOf = (col) => model()?.columnTypes?.[col];
  const isNumber = (col) => {
    const t = typeOf(col);
    return t === undefined ? null : NUMBER_TYPES.has(t);
  };
  const show = (i) => {
    s.step = i;
    render(stepper, STEPS.map((label, j) => h('li', {
      class: [j < i ? 'done' : '', s.serverProblems[j]?.length && j !== i ? 'has-error' : ''].join(' ').trim(),
      'aria-current': j === i ? 'step' : null,
    }, label)));
    render(body, [details, dataSource, modelStep, review][i]());
    body.querySelector('h2')?.focus();
  };
  const nav = (back) =>
    h('div', { class: 'actions' },
      back !== null ? h('button', { type: 'button', class: 'secondary', onclick: () => show(back) }, 'Back') : null,
      h('button', { type: 'submit', id: 'next' }, 'Next'));

  /**
   * Wires a step's form: `validate()` → [{name, message}] (name: a control's name, or null for the
   * step); problems show at their fields with a summary; once shown they are checked again on
   * every change, so a fixed one clears at once. `submit()` runs when there is none left.
   */
  function wire(form, summaryBox, validate, submit, step) {
    let shown = false;
    const controls = () => [...form.querySelectorAll('input, select, textarea')].filter((c) => c.name);
    const controlOf = (name) => (name ? form.querySelector(`[name="${name}"]`) : null);
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
    form.addEventListener('input', recheck);
    form.addEventListener('change', recheck);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
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

  // Step 1: client ID (unique, checked as you type), display name, description.
  function details() {
    const id = h('input', { type: 'text', name: 'clientId', value: s.clientId, required: true, autocomplete: 'off', spellcheck: 'false', maxlength: '64' });
    const idStatus = h('div', { id: 'client-id-status', 'aria-live': 'polite' });
    const name = h('input', { type: 'text', name: 'clientName', value: s.clientName, required: true });
    const desc = h('textarea', { name: 'description' }, s.description);
    const summaryBox = h('div', { class: 'summary-box' });
    const paint = () => {
      const msgs = {
        empty: null,
        invalid: null,
        checking: notice('info', 'Checking…'),
        free: notice('ok', `${s.clientId} is available.`),
        retry: notice('warn', `${s.clientId} exists as a failed or deleted client; creating it again is allowed.`),
        taken: null,
        error: notice('warn', 'Could not check the client ID; Next checks it again.'),
      };
      render(idStatus, msgs[s.idState]);
      idStatus.dataset.state = s.idState;
    };
    const check = debounce(async () => {
      const want = s.clientId;
      try {
        const r = await call('GET', userPath(`/v1/bi/admin/clients/${encodeURIComponent(want)}/`), { expect: [200, 404] });
        if (want !== s.clientId) return;
        s.idState = r.status === 404 ? 'free' : r.body.client?.status === 'ACTIVE' ? 'taken' : 'retry';
      } catch {
        s.idState = 'error';
      }
      paint();
      id.dispatchEvent(new Event('change', { bubbles: true }));
    }, 250);
    id.addEventListener('input', () => {
      s.clientId = id.value.trim().toUpperCase();
      s.idState = !s.clientId ? 'empty' : isClientId(s.clientId) ? 'checking' : 'invalid';
      paint();
      if (s.idState === 'checking') check();
    });
    const collect = () => {
      s.clientName = name.value.trim();
      s.description = desc.value.trim();
    };
    const validate = () => {
      collect();
      const problems = [];
      const idProblem = {
        empty: 'Client ID is required.',
        invalid: 'Client ID: use 1 to 64 letters, digits, "_" or "-", starting with a letter or digit.',
        taken: `Client ID: ${s.clientId} already exists.`,
        checking: 'Client ID: wait for the availability check.',
      }[s.idState];
      if (idProblem) problems.push({ name: 'clientId', message: idProblem });
      if (!s.clientName) problems.push({ name: 'clientName', message: 'Display name is required.' });
      const long = tooLong(s.clientName, CLIENT_LIMITS.clientName, 'Display name');
      if (long) problems.push({ name: 'clientName', message: long });
      const longDesc = tooLong(s.description, CLIENT_LIMITS.description, 'Description');
      if (longDesc) problems.push({ name: 'description', message: longDesc });
      return problems;
    };
    paint();
    const form = h('form', { class: 'panel', novalidate: true, 'aria-labelledby': 'step1-h' },
      h('h2', { tabindex: '-1', id: 'step1-h' }, '1. Client details'), summaryBox,
      field('Client ID', id, 'Unique; uppercased automatically.'), idStatus,
      field('Display name', name, `At most ${CLIENT_LIMITS.clientName.maxLength} characters.`),
      field('Description (optional)', desc, `At most ${CLIENT_LIMITS.description.maxLength} characters.`),
      nav(null));
    return wire(form, summaryBox, validate, async () => {
      if (s.idState === 'error') {
        // The check could not run: ask again before leaving the step.
        try {
          const r = await call('GET', userPath(`/v1/bi/admin/clients/${encodeURIComponent(s.clientId)}/`), { expect: [200, 404] });
          s.idState = r.status === 404 ? 'free' : r.body.client?.status === 'ACTIVE' ? 'taken' : 'retry';
        } catch (err) {
          return [{ name: 'clientId', message: `Client ID could not be checked: ${errorText(err)}` }];
        }
        paint();
        if (s.idState === 'taken') return [{ name: 'clientId', message: `Client ID: ${s.clientId} already exists.` }];
      }
      if (!s.vdmName) s.vdmName = `${s.clientName} data`.slice(0, VDM_LIMITS.name.maxLength);
      show(1);
      return [];
    }, 0);
  }

  const connectionBody = () => ({
    vendor: s.vendor,
    ...(s.vendor === 'SNOWFLAKE' ? { accountUrl: s.accountUrl, warehouse: s.warehouse } : { host: s.host, port: s.port ? Number(s.port) : undefined }),
    database: s.database, schema: s.schema, username: s.username,
    ...(s.password ? { password: s.password } : s.secretRef ? { secretRef: s.secretRef } : {}),
  });
  /** What a test result is tied to: every value sent, the password included (kept in memory only). */
  const testKey = () => JSON.stringify(connectionBody());
  const testedOk = () => s.tested !== null && s.tested.key === testKey() && s.tested.result.connected === true;

  // Step 2: data source and Test Connection.
  function dataSource() {
    const inputs = {};
    const input = (key, attrs = {}) => (inputs[key] = h('input', { type: 'text', name: key, value: s[key], ...attrs }));
    const vendor = h('select', { name: 'vendor' }, [...VENDORS].sort().map((v) => h('option', { value: v, selected: v === s.vendor }, v)));
    const vendorFields = h('div', { class: 'grid2' });
    const testOut = h('div', { id: 'test-result', 'aria-live': 'polite' });
    const summaryBox = h('div', { class: 'summary-box' });
    const ack = h('input', { type: 'checkbox', name: 'ackNoTest', checked: s.ackNoTest });
    ack.id = 'ack-no-test';
    const ackBox = h('div', { class: 'field', id: 'ack-box' },
      h('label', { class: 'check', for: 'ack-no-test' }, ack, 'Continue without a successful connection test'),
      h('div', { class: 'field-error', id: 'ack-no-test-error', hidden: true }));
    ack.addEventListener('change', () => (s.ackNoTest = ack.checked));
    const paintVendor = () => {
      render(vendorFields,
        s.vendor === 'SNOWFLAKE'
          ? [field('Account URL', input('accountUrl', { type: 'url', placeholder: 'https://<account>.snowflakecomputing.com' })), field('Warehouse', input('warehouse'))]
          : [field('Host', input('host', { placeholder: '127.0.0.1' })), field('Port', input('port', { type: 'number', min: '1', max: '65535' }))],
        field('Database', input('database')),
        field('Schema', input('schema')),
        field('Service-account user', input('username', { autocomplete: 'off' })),
        field('Password', input('password', { type: 'password', autocomplete: 'new-password' }), s.secretRef ? 'Leave empty to keep the stored password.' : 'Stored encrypted; never written to a manifest.'));
    };
    const collect = () => {
      s.vendor = vendor.value;
      for (const [k, el] of Object.entries(inputs)) if (el.isConnected) s[k] = el.value.trim();
    };
    /** The test result as it stands for the values now in the form. */
    const paintTest = () => {
      collect();
      const current = s.tested && s.tested.key === testKey();
      if (s.tested && !current) {
        render(testOut, notice('warn', `The values changed after the last test (${s.tested.result.message}): test again.`));
        testOut.dataset.connected = 'stale';
      } else if (s.tested) {
        render(testOut, notice(s.tested.result.connected ? 'ok' : 'bad', `${s.tested.result.message} (${s.tested.result.durationMs} ms)`));
        testOut.dataset.connected = String(s.tested.result.connected);
      } else {
        render(testOut);
        delete testOut.dataset.connected;
      }
      ackBox.hidden = testedOk();
      if (ackBox.hidden) {
        s.ackNoTest = false;
        ack.checked = false;
      }
    };
    vendor.addEventListener('change', () => {
      collect();
      paintVendor();
      paintTest();
    });
    paintVendor();
    const test = h('button', { type: 'button', class: 'secondary', id: 'test-connection' }, 'Test Connection');
    test.addEventListener('click', async () => {
      // Busy, not disabled: a disabled button loses keyboard focus (it would fall to the page).
      if (test.getAttribute('aria-disabled') === 'true') return;
      collect();
      const key = testKey();
      test.setAttribute('aria-disabled', 'true');
      render(testOut, notice('info', 'Connecting…'));
      testOut.dataset.connected = 'testing';
      try {
        const r = await call('POST', userPath('/v1/bi/admin/test-connection/'), { body: connectionBody() });
        s.tested = { key, result: r.body };
      } catch (err) {
        s.tested = { key, result: { connected: false, message: errorText(err), durationMs: 0 } };
      } finally {
        test.removeAttribute('aria-disabled');
      }
      paintTest();
      // Shown problems are checked again: a successful test clears the one about it.
      test.form?.dispatchEvent(new Event('change'));
    });
    const secretsNote = session.secrets && !session.secrets.available ? notice('warn', session.secrets.problem) : null;
    const validate = () => {
      collect();
      const problems = [];
      const required = s.vendor === 'SNOWFLAKE' ? [['accountUrl', 'Account URL']] : [['host', 'Host']];
      for (const [k, label] of [...required, ['database', 'Database'], ['schema', 'Schema'], ['username', 'Service-account user']]) {
        if (!s[k]) problems.push({ name: k, message: `${label} is required.` });
      }
      for (const [k, el] of Object.entries(inputs)) {
        if (!el.isConnected) continue;
        const long = tooLong(s[k], CONNECTION_LIMITS[k], el.closest('.field')?.querySelector('label')?.textContent ?? k);
        if (long) problems.push({ name: k, message: long });
      }
      if (s.vendor === 'POSTGRESQL' && s.port && !(Number.isInteger(Number(s.port)) && Number(s.port) >= 1 && Number(s.port) <= 65535)) {
        problems.push({ name: 'port', message: 'Port must be a whole number from 1 to 65535.' });
      }
      if (!testedOk() && !ack.checked) {
        problems.push({
          name: 'ackNoTest',
          message: s.tested && s.tested.key === testKey()
            ? 'The connection test failed: fix the values and test again, or tick "Continue without a successful connection test".'
            : 'Test the connection (the values changed or were never tested), or tick "Continue without a successful connection test".',
        });
      }
      return problems;
    };
    const form = h('form', { class: 'panel', novalidate: true, 'aria-labelledby': 'step2-h' },
      h('h2', { tabindex: '-1', id: 'step2-h' }, '2. Data source'), summaryBox,
      field('Vendor', vendor), vendorFields, secretsNote,
      h('div', { class: 'actions' }, test), testOut, ackBox, nav(0));
    // Any change of a tested value voids the test at once.
    form.addEventListener('input', (e) => e.target !== ack && paintTest());
    paintTest();
    return wire(form, summaryBox, validate, async () => {
      s.connectionBody = connectionBody();
      show(2);
      return [];
    }, 1);
  }

  /** The chosen measure and dimension, kept in step with the selected columns (never changed silently). */
  const settleChart = () => {
    const cols = s.columns ?? [];
    const measures = cols.filter((c) => isNumber(c) !== false);
    if (s.measureChoice === null) s.measureChoice = measures.find((c) => MEASURE_HINT.test(c)) ?? measures[measures.length - 1] ?? '';
    s.measure = cols.includes(s.measureChoice) ? s.measureChoice : '';
    if (s.dimensionChoice === null) s.dimensionChoice = cols.find((c) => c !== s.measure && isNumber(c) !== true) ?? cols.find((c) => c !== s.measure) ?? '';
    s.dimension = cols.includes(s.dimensionChoice) ? s.dimensionChoice : '';
  };

  // Step 3: core model, row-level security, VDM columns, optional starter dashboard.
  function modelStep() {
    const select = h('select', { name: 'coreModelId' }, models.map((m) => h('option', { value: m.modelId, selected: m.modelId === s.coreModelId }, `${m.name} (${m.modelId})`)));
    const rls = h('input', { type: 'checkbox', name: 'rls', checked: s.rls });
    const vdmName = h('input', { type: 'text', name: 'vdmName', value: s.vdmName });
    const colsBox = h('fieldset', { class: 'field' });
    const dash = h('input', { type: 'checkbox', name: 'dashboard', checked: s.dashboard });
    const dashBox = h('div', { class: 'grid2' });
    const summaryBox = h('div', { class: 'summary-box' });
    const preview = h('div', { id: 'dashboard-preview' });
    const paintPreview = () => render(preview, s.dashboard && s.measure && s.dimension ? [h('h3', {}, 'Preview'), dashboardPreview(onboardingPackage().dashboards[0])] : null);
    const paintColumns = () => {
      const cols = model()?.columns ?? [];
      if (s.columns === null || s.columns.some((c) => !cols.includes(c))) s.columns = [...cols];
      colsBox.replaceChildren(h('legend', {}, 'Columns of the VDM'), h('div', { class: 'field-error', id: `column-${cols[0]}-error`, hidden: true }),
        cols.length
          ? h('div', { class: 'columns' }, cols.map((c) => h('label', { class: 'check' },
              h('input', { type: 'checkbox', name: 'column', id: `column-${c}`, value: c, checked: s.columns.includes(c), onchange: (e) => {
                // Kept in the model's order, whatever the order of the clicks.
                const chosen = new Set(e.target.checked ? [...s.columns, c] : s.columns.filter((x) => x !== c));
                s.columns = cols.filter((x) => chosen.has(x));
                paintDash();
              } }), c, typeOf(c) ? h('span', { class: 'type' }, ` (${typeOf(c)})`) : null)))
          : h('p', { class: 'muted' }, 'This core model lists no columns.'));
      paintDash();
    };
    const paintDash = () => {
      settleChart();
      const cols = s.columns ?? [];
      const numeric = cols.filter((c) => isNumber(c) !== false);
      const option = (c, chosen) => h('option', { value: c, selected: c === chosen }, c);
      const measure = h('select', { name: 'measure', onchange: (e) => { s.measureChoice = s.measure = e.target.value; paintPreview(); } },
        s.measure ? null : h('option', { value: '', selected: true }, s.measureChoice ? `(${s.measureChoice} is not selected)` : '(choose)'),
        numeric.map((c) => option(c, s.measure)));
      const dimension = h('select', { name: 'dimension', onchange: (e) => { s.dimensionChoice = s.dimension = e.target.value; paintPreview(); } },
        s.dimension ? null : h('option', { value: '', selected: true }, s.dimensionChoice ? `(${s.dimensionChoice} is not selected)` : '(choose)'),
        cols.map((c) => option(c, s.dimension)));
      render(dashBox, s.dashboard
        ? [field('Measure (summed)', measure, model()?.columnTypes && Object.keys(model().columnTypes).length ? 'Number columns of the core model.' : 'The core model declares no column types: pick a number column.'),
            field('By dimension', dimension)]
        : null);
      paintPreview();
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
    const validate = () => {
      s.rls = rls.checked;
      s.vdmName = vdmName.value.trim();
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
    const form = h('form', { class: 'panel', novalidate: true, 'aria-labelledby': 'step3-h' },
      h('h2', { tabindex: '-1', id: 'step3-h' }, '3. Model and dashboard'), summaryBox,
      models.length ? field('Core model', select) : notice('bad', 'No core model exists yet: add a CoreModel manifest first.'),
      h('div', { class: 'field' }, h('label', { class: 'check' }, rls, 'Row-level security')),
      field('VDM name', vdmName, `At most ${VDM_LIMITS.name.maxLength} characters.`), colsBox,
      h('div', { class: 'field' }, h('label', { class: 'check' }, dash, 'Starter dashboard (a KPI and a bar chart)')), dashBox, preview,
      nav(1));
    return wire(form, summaryBox, validate, async () => {
      // The server's own rules (a column's type, the package schema) before anything is written.
      const planned = await dryRun();
      if (planned.problems.length) {
        const here = planned.problems.filter((p) => p.step === 2);
        const elsewhere = planned.problems.filter((p) => p.step !== 2);
        if (elsewhere.length) {
          const first = Math.min(...elsewhere.map((p) => p.step));
          show(first);
          return [];
        }
        return here;
      }
      show(3);
      return [];
    }, 2);
  }

  const onboardingPackage = (connectionId) => ({
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
  });

  /**
   * The package checked by the server (`?dryRun=true`: nothing written) with a stand-in for the
   * connection Create writes. Problems are filed under their step (s.serverProblems).
   */
  async function dryRun() {
    for (const k of Object.keys(s.serverProblems)) s.serverProblems[k] = [];
    let problems = [];
    try {
      const r = await call('POST', `${userPath('/v1/sdk/client/onboard/')}?dryRun=true`, { body: onboardingPackage(s.connectionId ?? PLANNED_CONNECTION), expect: [200, 400, 409, 422] });
      if (r.status !== 200) problems = new ApiError(r.status, r.body).problems;
    } catch (err) {
      // The check itself failed (network, 5xx): Create reports it at step 4.
      return { problems: [], error: errorText(err) };
    }
    const placed = problems.map((p) => ({ ...placeOf(p.path), message: p.text }));
    for (const p of placed) s.serverProblems[p.step].push(p);
    return { problems: placed };
  }

  // Step 4: review, then create with live progress.
  function review() {
    const c = s.connectionBody;
    const m = model();
    const testText = testedOk() ? s.tested.result.message : s.tested && s.tested.key === testKey() ? `failed: ${s.tested.result.message} (continuing without a successful test)` : 'not run for these values (continuing without a successful test)';
    const rows = [
      ['Client', `${s.clientId} — ${s.clientName}`],
      ['Description', s.description || '—'],
      ['Data source', `${c.vendor} ${c.vendor === 'SNOWFLAKE' ? c.accountUrl : `${c.host}:${c.port ?? 5432}`} / ${c.database}.${c.schema} as ${c.username}`],
      ['Credentials', c.password ? 'password typed (stored encrypted)' : c.secretRef ? `stored (${c.secretRef})` : 'none'],
      ['Test Connection', testText],
      ['Core model', m ? `${m.name} (${m.modelId})` : s.coreModelId],
      ['Row-level security', s.rls ? 'on' : 'off'],
      ['VDM', `${s.vdmName}: ${s.columns.join(', ')}`],
      ['Starter dashboard', s.dashboard ? `yes (sum of ${s.measure} by ${s.dimension})` : 'no'],
    ];
    const progressBox = h('div', { id: 'progress' });
    const resultBox = h('div', { id: 'create-result' });
    const create = h('button', { type: 'submit', id: 'create' }, 'Create client');
    const back = h('button', { type: 'button', class: 'secondary', onclick: () => show(2) }, 'Back');
    const form = h('form', { class: 'panel', novalidate: true, 'aria-labelledby': 'step4-h' },
      h('h2', { tabindex: '-1', id: 'step4-h' }, '4. Review and create'),
      s.serverProblems[3].length ? notice('bad', s.serverProblems[3].map((p) => p.message).join(' ')) : null,
      h('dl', { class: 'facts', id: 'review' }, rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
      h('div', { class: 'actions' }, back, create),
      progressBox);
    const finish = (focusEl) => {
      create.disabled = false;
      back.disabled = false;
      (focusEl ?? create).focus();
    };
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      create.disabled = true;
      back.disabled = true;
      render(resultBox);
      // Checked again before anything is written: a problem goes back to its step, no connection is left behind.
      const planned = await dryRun();
      if (planned.problems.length) {
        show(Math.min(...planned.problems.map((p) => p.step)));
        return;
      }
      const progress = new Progress(clientSteps({ withConnection: true, withDashboards: s.dashboard }));
      render(progressBox, h('h3', {}, 'Progress'), progress.el);
      // `owner`: a retry (even after a lost answer) updates the connection written for this client instead of adding one.
      const connection = { ...s.connectionBody, name: `${s.clientName} warehouse`, description: `Data source of client ${s.clientId}`, owner: s.clientId, ...(s.connectionId ? { connectionId: s.connectionId } : {}) };
      const outcome = await runOnboarding({ connection, pkg: onboardingPackage(PLANNED_CONNECTION), progress });
      if (outcome.connectionId) {
        s.connectionId = outcome.connectionId;
        s.secretRef = outcome.secretRef ?? s.secretRef;
        s.connectionBody = { ...s.connectionBody, password: undefined, ...(s.secretRef ? { secretRef: s.secretRef } : {}) };
        s.password = '';
        // The stored secret is what the next attempt sends: the test stays valid for it.
        if (s.tested) s.tested = { ...s.tested, key: testKey() };
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
        heading?.focus();
        return;
      }
      create.textContent = 'Try again';
      finish(heading);
    });
    return h('div', {}, form, resultBox);
  }

  if (!getSession()) return root;
  show(0);
  return root;
}
