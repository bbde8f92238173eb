import { ApiError, call, getSession, userPath } from '../api.js';
import { debounce, field, h, notice, render } from '../dom.js';
import { clientSteps, resultPanel, runOnboarding } from '../onboarding.js';
import { Progress } from '../progress.js';
import { VENDORS } from '../schema-constants.js';
import { isClientId } from '../schema-rules.js';

const STEPS = ['Client details', 'Data source', 'Model and dashboard', 'Review and create'];
const MEASURE_HINT = /revenue|amount|total|sales|quantity|qty|count|price|value/i;

/** The 4-step New client wizard (spec 1, "Settings UI flow"). */
export async function wizardPage() {
  const [models, session] = await Promise.all([
    call('GET', userPath('/v1/bi/admin/core-models/')).then((r) => r.body.coreModels ?? []),
    call('GET', userPath('/v1/settings/session/')).then((r) => r.body),
  ]);
  const s = {
    step: 0,
    clientId: '', clientName: '', description: '', idState: 'empty',
    vendor: 'POSTGRESQL', accountUrl: '', host: '', port: '5432', warehouse: '', database: '', schema: '', username: '', password: '',
    tested: null,
    coreModelId: models[0]?.modelId ?? '', rls: true, vdmName: '', columns: null, dashboard: true, measure: '', dimension: '',
    connectionId: undefined, secretRef: undefined,
  };
  const root = h('section', { 'aria-labelledby': 'wizard-h' });
  const stepper = h('ol', { class: 'stepper', 'aria-label': 'Steps' });
  const body = h('div');
  render(root, h('h1', { id: 'wizard-h' }, 'New client'), stepper, body);

  const model = () => models.find((m) => m.modelId === s.coreModelId);
  const show = (i) => {
    s.step = i;
    render(stepper, STEPS.map((label, j) => h('li', { class: j < i ? 'done' : '', 'aria-current': j === i ? 'step' : null }, label)));
    render(body, [details, dataSource, modelStep, review][i]());
    body.querySelector('h2')?.focus();
  };
  const nav = (back, next, nextLabel = 'Next') =>
    h('div', { class: 'actions' },
      back !== null ? h('button', { type: 'button', class: 'secondary', onclick: () => show(back) }, 'Back') : null,
      h('button', { type: 'submit', id: 'next' }, nextLabel));

  // Step 1: client ID (unique, checked as you type), display name, description.
  function details() {
    const id = h('input', { type: 'text', name: 'clientId', value: s.clientId, required: true, autocomplete: 'off', spellcheck: 'false', maxlength: '64' });
    const idStatus = h('div', { id: 'client-id-status', 'aria-live': 'polite' });
    const name = h('input', { type: 'text', name: 'clientName', value: s.clientName, required: true });
    const desc = h('textarea', { name: 'description' }, s.description);
    const error = h('div');
    const paint = () => {
      const msgs = {
        empty: null,
        invalid: notice('bad', 'Use letters, digits, "_" or "-" (it is stored uppercased and becomes a file name).'),
        checking: notice('info', 'Checking…'),
        free: notice('ok', `${s.clientId} is available.`),
        retry: notice('warn', `${s.clientId} exists as a failed or deleted client; creating it again is allowed.`),
        taken: notice('bad', `${s.clientId} already exists.`),
        error: notice('bad', 'Could not check the client ID.'),
      };
      render(idStatus, msgs[s.idState]);
      id.setAttribute('aria-invalid', String(['invalid', 'taken'].includes(s.idState)));
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
    }, 250);
    id.addEventListener('input', () => {
      s.clientId = id.value.trim().toUpperCase();
      s.idState = !s.clientId ? 'empty' : isClientId(s.clientId) ? 'checking' : 'invalid';
      paint();
      if (s.idState === 'checking') check();
    });
    paint();
    const form = h('form', { class: 'panel', novalidate: true },
      h('h2', { tabindex: '-1' }, '1. Client details'),
      field('Client ID', id, 'Unique; uppercased automatically.'), idStatus,
      field('Display name', name),
      field('Description (optional)', desc),
      error, nav(null));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      s.clientName = name.value.trim();
      s.description = desc.value.trim();
      const problems = [];
      if (!['free', 'retry'].includes(s.idState)) problems.push(s.idState === 'checking' ? 'Wait for the client ID check.' : 'Choose an available client ID.');
      if (!s.clientName) problems.push('Display name is required.');
      if (problems.length) return render(error, notice('bad', problems.join(' ')));
      if (!s.vdmName) s.vdmName = `${s.clientName} data`;
      show(1);
    });
    return form;
  }

  // Step 2: data source and Test Connection.
  function dataSource() {
    const inputs = {};
    const input = (key, attrs = {}) => (inputs[key] = h('input', { type: 'text', name: key, value: s[key], ...attrs }));
    const vendor = h('select', { name: 'vendor' }, [...VENDORS].sort().map((v) => h('option', { value: v, selected: v === s.vendor }, v)));
    const vendorFields = h('div', { class: 'grid2' });
    const testOut = h('div', { id: 'test-result', 'aria-live': 'polite' });
    const error = h('div');
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
    const connectionBody = () => ({
      vendor: s.vendor,
      ...(s.vendor === 'SNOWFLAKE' ? { accountUrl: s.accountUrl, warehouse: s.warehouse } : { host: s.host, port: s.port ? Number(s.port) : undefined }),
      database: s.database, schema: s.schema, username: s.username,
      ...(s.password ? { password: s.password } : s.secretRef ? { secretRef: s.secretRef } : {}),
    });
    vendor.addEventListener('change', () => {
      collect();
      s.tested = null;
      paintVendor();
      render(testOut);
    });
    paintVendor();
    const test = h('button', { type: 'button', class: 'secondary', id: 'test-connection' }, 'Test Connection');
    test.addEventListener('click', async () => {
      collect();
      test.disabled = true;
      render(testOut, notice('info', 'Connecting…'));
      try {
        const r = await call('POST', userPath('/v1/bi/admin/test-connection/'), { body: connectionBody() });
        s.tested = r.body;
        render(testOut, notice(r.body.connected ? 'ok' : 'bad', `${r.body.message} (${r.body.durationMs} ms)`));
        testOut.dataset.connected = String(r.body.connected);
      } catch (err) {
        render(testOut, notice('bad', err instanceof ApiError ? err.message : String(err)));
        testOut.dataset.connected = 'false';
      } finally {
        test.disabled = false;
      }
    });
    const secretsNote = session.secrets && !session.secrets.available ? notice('warn', session.secrets.problem) : null;
    const form = h('form', { class: 'panel', novalidate: true },
      h('h2', { tabindex: '-1' }, '2. Data source'),
      field('Vendor', vendor), vendorFields, secretsNote,
      h('div', { class: 'actions' }, test), testOut, error, nav(0));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      collect();
      const missing = [];
      if (s.vendor === 'SNOWFLAKE' && !s.accountUrl) missing.push('account URL');
      if (s.vendor === 'POSTGRESQL' && !s.host) missing.push('host');
      if (!s.database) missing.push('database');
      if (!s.schema) missing.push('schema');
      if (!s.username) missing.push('user');
      if (missing.length) return render(error, notice('bad', `Required: ${missing.join(', ')}.`));
      s.connectionBody = connectionBody();
      show(2);
    });
    return form;
  }

  // Step 3: core model, row-level security, VDM columns, optional starter dashboard.
  function modelStep() {
    const select = h('select', { name: 'coreModelId' }, models.map((m) => h('option', { value: m.modelId, selected: m.modelId === s.coreModelId }, `${m.name} (${m.modelId})`)));
    const rls = h('input', { type: 'checkbox', name: 'rls', checked: s.rls });
    const vdmName = h('input', { type: 'text', name: 'vdmName', value: s.vdmName });
    const colsBox = h('fieldset', {}, h('legend', {}, 'Columns of the VDM'));
    const dash = h('input', { type: 'checkbox', name: 'dashboard', checked: s.dashboard });
    const dashBox = h('div', { class: 'grid2' });
    const error = h('div');
    const paintColumns = () => {
      const cols = model()?.columns ?? [];
      if (s.columns === null || s.columns.some((c) => !cols.includes(c))) s.columns = [...cols];
      colsBox.replaceChildren(h('legend', {}, 'Columns of the VDM'),
        cols.length
          ? h('div', { class: 'columns' }, cols.map((c) => h('label', { class: 'check' },
              h('input', { type: 'checkbox', name: 'column', value: c, checked: s.columns.includes(c), onchange: (e) => {
                s.columns = e.target.checked ? [...s.columns, c] : s.columns.filter((x) => x !== c);
                paintDash();
              } }), c)))
          : h('p', { class: 'muted' }, 'This core model lists no columns.'));
      paintDash();
    };
    const paintDash = () => {
      const cols = s.columns ?? [];
      if (!cols.includes(s.measure)) s.measure = cols.find((c) => MEASURE_HINT.test(c)) ?? cols[cols.length - 1] ?? '';
      if (!cols.includes(s.dimension) || s.dimension === s.measure) s.dimension = cols.find((c) => c !== s.measure) ?? '';
      const measure = h('select', { name: 'measure', onchange: (e) => (s.measure = e.target.value) }, cols.map((c) => h('option', { value: c, selected: c === s.measure }, c)));
      const dimension = h('select', { name: 'dimension', onchange: (e) => (s.dimension = e.target.value) }, cols.map((c) => h('option', { value: c, selected: c === s.dimension }, c)));
      render(dashBox, s.dashboard && cols.length >= 2 ? [field('Measure', measure), field('By dimension', dimension)] : null);
    };
    select.addEventListener('change', () => {
      s.coreModelId = select.value;
      s.columns = null;
      paintColumns();
    });
    dash.addEventListener('change', () => {
      s.dashboard = dash.checked;
      paintDash();
    });
    paintColumns();
    const form = h('form', { class: 'panel', novalidate: true },
      h('h2', { tabindex: '-1' }, '3. Model and dashboard'),
      models.length ? field('Core model', select) : notice('bad', 'No core model exists yet: add a CoreModel manifest first.'),
      h('div', { class: 'field' }, h('label', { class: 'check' }, rls, 'Row-level security')),
      field('VDM name', vdmName), colsBox,
      h('div', { class: 'field' }, h('label', { class: 'check' }, dash, 'Starter dashboard (a KPI and a bar chart)')), dashBox,
      error, nav(1));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      s.rls = rls.checked;
      s.vdmName = vdmName.value.trim() || `${s.clientName} data`;
      const problems = [];
      if (!s.coreModelId) problems.push('Pick a core model.');
      if (!s.columns?.length) problems.push('Select at least one column.');
      if (s.dashboard && (!s.measure || !s.dimension)) problems.push('The starter dashboard needs a measure and a dimension (two columns).');
      if (problems.length) return render(error, notice('bad', problems.join(' ')));
      show(3);
    });
    return form;
  }

  const onboardingPackage = () => ({
    clientId: s.clientId,
    clientName: s.clientName,
    ...(s.description ? { description: s.description } : {}),
    connectionId: s.connectionId ?? '(created in this run)',
    coreModelId: s.coreModelId,
    security: { enabled: s.rls },
    vdm: [{ name: s.vdmName, selectedColumns: s.columns, securityEnabled: s.rls }],
    ...(s.dashboard
      ? {
          dashboards: [{
            name: `${s.clientName} overview`,
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

  // Step 4: review, then create with live progress.
  function review() {
    const c = s.connectionBody;
    const m = model();
    const rows = [
      ['Client', `${s.clientId} — ${s.clientName}`],
      ['Description', s.description || '—'],
      ['Data source', `${c.vendor} ${c.vendor === 'SNOWFLAKE' ? c.accountUrl : `${c.host}:${c.port ?? 5432}`} / ${c.database}.${c.schema} as ${c.username}`],
      ['Credentials', c.password ? 'password typed (stored encrypted)' : c.secretRef ? `stored (${c.secretRef})` : 'none'],
      ['Test Connection', s.tested ? s.tested.message : 'not run'],
      ['Core model', m ? `${m.name} (${m.modelId})` : s.coreModelId],
      ['Row-level security', s.rls ? 'on' : 'off'],
      ['VDM', `${s.vdmName}: ${s.columns.join(', ')}`],
      ['Starter dashboard', s.dashboard ? `yes (${s.measure} by ${s.dimension})` : 'no'],
    ];
    const progressBox = h('div', { id: 'progress' });
    const resultBox = h('div');
    const create = h('button', { type: 'submit', id: 'create' }, 'Create client');
    const back = h('button', { type: 'button', class: 'secondary', onclick: () => show(2) }, 'Back');
    const form = h('form', { class: 'panel', novalidate: true },
      h('h2', { tabindex: '-1' }, '4. Review and create'),
      h('dl', { class: 'facts', id: 'review' }, rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
      h('div', { class: 'actions' }, back, create),
      progressBox);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      create.disabled = true;
      back.disabled = true;
      const progress = new Progress(clientSteps({ withConnection: true, withDashboards: s.dashboard }));
      render(progressBox, h('h3', {}, 'Progress'), progress.el);
      render(resultBox);
      const pkg = onboardingPackage();
      const connection = { ...s.connectionBody, name: `${s.clientName} warehouse`, description: `Data source of client ${s.clientId}`, ...(s.connectionId ? { connectionId: s.connectionId } : {}) };
      try {
        const outcome = await runOnboarding({ connection, pkg, progress });
        if (outcome.connectionId) {
          // A retry updates the same Connection (and its stored password) instead of adding another.
          s.connectionId = outcome.connectionId;
          s.secretRef = outcome.secretRef ?? s.secretRef;
          s.connectionBody = { ...s.connectionBody, password: undefined, ...(s.secretRef ? { secretRef: s.secretRef } : {}) };
          s.password = '';
        }
        progressBox.dataset.live = String(outcome.live);
        render(resultBox, await resultPanel(outcome, s.clientId));
        if (outcome.status >= 400) {
          create.disabled = false;
          back.disabled = false;
          create.textContent = 'Try again';
        }
      } catch (err) {
        render(resultBox, notice('bad', err instanceof ApiError ? err.message : String(err)));
        create.disabled = false;
        back.disabled = false;
      }
      resultBox.querySelector('h2')?.setAttribute('tabindex', '-1');
      resultBox.querySelector('h2')?.focus();
    });
    return h('div', {}, form, resultBox);
  }

  if (!getSession()) return root;
  show(0);
  return root;
}
