import { call, errorText, userPath } from '../api.js';
import { debounce, field, h, notice, render, showProblems } from '../dom.js';
import { clientSteps, resultPanel, runOnboarding } from '../onboarding.js';
import { Progress } from '../progress.js';
import { CLIENT_LIMITS, CONNECTION_LIMITS, VENDORS } from '../schema-constants.js';
import { isClientId } from '../schema-rules.js';

const MAX_BYTES = 1024 * 1024;
const CONNECTION_ID = new RegExp(CLIENT_LIMITS.connectionId.pattern);

/**
 * Import: an exported onboarding package file → onboarding, with live progress and the outcome.
 * A copy under another client ID gets a data source of its own: a new connection typed here
 * (written, owned by the copy, before the onboarding) or another existing connection ID; the
 * original's connection belongs to the original client and is refused.
 */
export function importPage() {
  /** The package file as read (any JSON object: the server checks it). @type {Record<string, unknown> | null} */
  let pkg = null;
  let idState = 'empty'; // free | retry | taken | checking | error
  const file = h('input', { type: 'file', name: 'package', accept: '.json,application/json' });
  const summary = h('div', { id: 'package-summary', 'aria-live': 'polite' });
  const asId = h('input', { type: 'text', name: 'clientId', autocomplete: 'off', spellcheck: 'false' });
  const idStatus = h('div', { id: 'import-id-status', 'aria-live': 'polite' });
  const asName = h('input', { type: 'text', name: 'clientName' });
  const asConnection = h('input', { type: 'text', name: 'connectionId', autocomplete: 'off', spellcheck: 'false', placeholder: 'D####A#####' });
  const sourceNew = h('input', { type: 'radio', name: 'source', value: 'new', id: 'source-new' });
  const sourceExisting = h('input', { type: 'radio', name: 'source', value: 'existing', id: 'source-existing', checked: true });
  const conn = {
    vendor: h('select', { name: 'vendor' }, [...VENDORS].sort().map((v) => h('option', { value: v, selected: v === 'POSTGRESQL' }, v))),
    host: h('input', { type: 'text', name: 'host', placeholder: '127.0.0.1 (or the Snowflake account URL)' }),
    port: h('input', { type: 'number', name: 'port', value: '5432', min: '1', max: '65535' }),
    database: h('input', { type: 'text', name: 'database' }),
    schema: h('input', { type: 'text', name: 'schema' }),
    username: h('input', { type: 'text', name: 'username', autocomplete: 'off' }),
    password: h('input', { type: 'password', name: 'password', autocomplete: 'new-password' }),
  };
  const newSource = h('fieldset', { id: 'new-source' }, h('legend', {}, 'The copy\'s data source'),
    h('div', { class: 'grid2' },
      field('Vendor', conn.vendor), field('Host or account URL', conn.host), field('Port', conn.port),
      field('Database', conn.database), field('Schema', conn.schema), field('Service-account user', conn.username),
      field('Password', conn.password, 'Stored encrypted; never written to a manifest.')));
  const existingSource = h('div', { id: 'existing-source' },
    field('Data source (connection ID)', asConnection, 'The client\'s connection; a copy under another ID needs another one than the original\'s.'));
  const sourceChoice = h('fieldset', { id: 'source-choice' }, h('legend', {}, 'Data source'),
    h('label', { class: 'check', for: 'source-existing' }, sourceExisting, 'An existing connection ID'),
    h('label', { class: 'check', for: 'source-new' }, sourceNew, 'A new data source for this client (typed below)'));
  const isCopy = () => pkg !== null && asId.value.trim().toUpperCase() !== String(pkg.clientId ?? '').toUpperCase();
  const paintSource = () => {
    newSource.hidden = !sourceNew.checked;
    existingSource.hidden = sourceNew.checked;
  };
  sourceNew.addEventListener('change', paintSource);
  sourceExisting.addEventListener('change', paintSource);

  const paintId = () => {
    /** @type {Record<string, HTMLElement>} */
    const texts = {
      checking: notice('info', 'Checking…'),
      free: notice('ok', `${asId.value.trim().toUpperCase()} is free.`),
      retry: notice('warn', `${asId.value.trim().toUpperCase()} exists as a failed or deleted client; importing it again is allowed.`),
      error: notice('warn', 'Could not check the client ID.'),
      taken: notice('warn', `${asId.value.trim().toUpperCase()} already exists: importing it would change nothing. Choose another ID to create a copy.`),
    };
    render(idStatus, texts[idState] ?? null);
    idStatus.dataset.state = idState;
  };
  const checkId = debounce(async () => {
    const want = asId.value.trim().toUpperCase();
    if (!isClientId(want)) return;
    try {
      /** @type {import('../types.js').Answer<import('../types.js').ApiClientRead>} */
      const r = await call('GET', userPath(`/v1/bi/admin/clients/${encodeURIComponent(want)}/`), { expect: [200, 404] });
      if (want !== asId.value.trim().toUpperCase()) return;
      idState = r.status === 404 ? 'free' : r.body.client?.status === 'ACTIVE' ? 'taken' : 'retry';
    } catch {
      idState = 'error';
    }
    paintId();
    recheck();
  }, 250);
  asId.addEventListener('input', () => {
    if (pkg && isCopy() && asConnection.value === String(pkg.connectionId ?? '')) asConnection.value = '';
    if (pkg && !isCopy() && !asConnection.value) asConnection.value = String(pkg.connectionId ?? '');
    idState = isClientId(asId.value.trim().toUpperCase()) ? 'checking' : 'empty';
    paintId();
    checkId();
  });

  const progressBox = h('div', { id: 'progress' });
  const resultBox = h('div');
  const summaryBox = h('div', { class: 'summary-box' });
  const submit = h('button', { type: 'submit', id: 'import', disabled: true }, 'Import');
  const controls = () => [asId, asName, asConnection, ...Object.values(conn)];

  /** @type {Record<string, {maxLength?: number, pattern?: string, minimum?: number, maximum?: number}>} */
  const limits = CONNECTION_LIMITS;
  /** @returns {{control: HTMLElement, message: string}[]} */
  const validate = () => {
    /** @type {{control: HTMLElement, message: string}[]} */
    const problems = [];
    const clientId = asId.value.trim().toUpperCase();
    if (!isClientId(clientId)) problems.push({ control: asId, message: 'Client ID: use 1 to 64 letters, digits, "_" or "-", starting with a letter or digit.' });
    else if (idState === 'taken') problems.push({ control: asId, message: `Client ID: ${clientId} already exists; importing it would change nothing. Choose another ID to create a copy.` });
    const name = asName.value.trim() || String(pkg?.clientName ?? '');
    if (!name.trim()) problems.push({ control: asName, message: 'Display name is required.' });
    else if (name.length > CLIENT_LIMITS.clientName.maxLength) problems.push({ control: asName, message: `Display name must be at most ${CLIENT_LIMITS.clientName.maxLength} characters (it has ${name.length}).` });
    if (sourceNew.checked) {
      for (const k of /** @type {const} */ (['host', 'database', 'schema', 'username'])) {
        const v = conn[k].value.trim();
        const max = limits[k]?.maxLength;
        if (!v) problems.push({ control: conn[k], message: `${conn[k].closest('.field')?.querySelector('label')?.textContent ?? k} is required.` });
        else if (max && v.length > max) problems.push({ control: conn[k], message: `${k} must be at most ${max} characters.` });
      }
    } else {
      const connectionId = asConnection.value.trim();
      if (!connectionId || !CONNECTION_ID.test(connectionId)) problems.push({ control: asConnection, message: 'Data source: enter a connection ID of the shape D####A#####, or choose a new data source.' });
      else if (isCopy() && connectionId === String(pkg?.connectionId ?? '')) {
        problems.push({ control: asConnection, message: `Data source: ${connectionId} belongs to ${pkg?.clientId}; a copy under another ID needs its own connection.` });
      }
    }
    return problems;
  };
  let shown = false;
  /**
   * @param {{control: HTMLElement, message: string}[]} problems
   * @param {boolean} focus
   */
  const paintProblems = (problems, focus) => {
    const box = showProblems(controls(), problems);
    render(summaryBox, box);
    shown = Boolean(box);
    if (box && focus) box.focus();
  };
  const recheck = () => shown && paintProblems(validate(), false);

  file.addEventListener('change', async () => {
    pkg = null;
    submit.disabled = true;
    render(progressBox);
    render(resultBox);
    const f = file.files?.[0];
    if (!f) return render(summary);
    if (f.size > MAX_BYTES) return render(summary, notice('bad', `${f.name} is larger than 1 MiB.`));
    try {
      const parsed = JSON.parse(await f.text());
      const candidate = parsed && typeof parsed === 'object' && parsed.package && typeof parsed.package === 'object' ? parsed.package : parsed;
      if (!candidate || typeof candidate !== 'object' || Array.isArray(candidate)) throw new Error('not an onboarding package (expected a JSON object)');
      pkg = /** @type {Record<string, unknown>} */ (candidate);
    } catch (err) {
      return render(summary, notice('bad', `${f.name} cannot be read: ${errorText(err)}`));
    }
    asId.value = String(pkg.clientId ?? '').toUpperCase();
    asName.value = String(pkg.clientName ?? '');
    asConnection.value = String(pkg.connectionId ?? '');
    sourceExisting.checked = true;
    paintSource();
    asId.dispatchEvent(new Event('input'));
    const vdms = Array.isArray(pkg.vdm) ? pkg.vdm : [];
    const dashboards = Array.isArray(pkg.dashboards) ? pkg.dashboards : [];
    render(summary, h('dl', { class: 'facts' },
      h('dt', {}, 'File'), h('dd', {}, f.name),
      h('dt', {}, 'Client'), h('dd', {}, `${pkg.clientId ?? '—'} — ${pkg.clientName ?? '—'}`),
      h('dt', {}, 'Connection'), h('dd', { class: 'mono' }, String(pkg.connectionId ?? '—')),
      h('dt', {}, 'Core model'), h('dd', { class: 'mono' }, String(pkg.coreModelId ?? '—')),
      h('dt', {}, 'VDMs'), h('dd', {}, vdms.map((/** @type {{name?: unknown} | null} */ v) => v?.name ?? '?').join(', ') || '—'),
      h('dt', {}, 'Dashboards'), h('dd', {}, dashboards.map((/** @type {{name?: unknown} | null} */ d) => d?.name ?? '?').join(', ') || 'none')));
    submit.disabled = false;
  });

  paintSource();
  const form = h('form', { class: 'panel', novalidate: true, 'aria-labelledby': 'import-h' },
    h('h1', { id: 'import-h' }, 'Import a client'),
    h('p', { class: 'muted' }, 'Upload an onboarding package exported from a client (Export button) or written by hand. It is onboarded exactly as the API onboards it.'),
    summaryBox,
    field('Package file (.json)', file), summary,
    h('div', { class: 'grid2' },
      h('div', {}, field('Import as client ID', asId, 'Change it to create a copy under another ID.'), idStatus),
      field('Display name', asName)),
    sourceChoice, existingSource, newSource,
    h('div', { class: 'actions' }, submit),
    progressBox);
  form.addEventListener('input', recheck);
  form.addEventListener('change', recheck);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!pkg) return;
    const problems = validate();
    if (problems.length) return paintProblems(problems, true);
    paintProblems([], false);
    submit.disabled = true;
    const clientId = asId.value.trim().toUpperCase();
    const clientName = asName.value.trim() || pkg.clientName;
    const connection = sourceNew.checked
      ? {
          vendor: conn.vendor.value,
          ...(conn.vendor.value === 'SNOWFLAKE' ? { accountUrl: conn.host.value.trim() } : { host: conn.host.value.trim(), port: Number(conn.port.value) || undefined }),
          database: conn.database.value.trim(), schema: conn.schema.value.trim(), username: conn.username.value.trim(),
          ...(conn.password.value ? { password: conn.password.value } : {}),
          name: `${clientName} warehouse`.slice(0, 512), description: `Data source of client ${clientId}`, owner: clientId,
        }
      : undefined;
    /** @type {Record<string, unknown>} */
    const body = { ...pkg, clientId, clientName, connectionId: connection ? 'D0000A00000' : asConnection.value.trim() };
    const progress = new Progress(clientSteps({ withConnection: Boolean(connection), withDashboards: Array.isArray(body.dashboards) && body.dashboards.length > 0 }));
    render(progressBox, h('h2', {}, 'Progress'), progress.el);
    render(resultBox);
    const outcome = await runOnboarding({ connection, pkg: body, progress });
    progressBox.dataset.live = String(outcome.live);
    try {
      render(resultBox, await resultPanel(outcome, clientId));
    } catch (err) {
      render(resultBox, notice('bad', errorText(err)));
    }
    submit.disabled = false;
    const heading = resultBox.querySelector('h2');
    heading?.setAttribute('tabindex', '-1');
    heading?.focus();
  });
  return h('section', {}, form, resultBox);
}
