// Step 2 of the wizard: the data source and Test Connection (tied to the values it tested).
import { call, errorText, userPath } from '../../api.js';
import { field, h, notice, render } from '../../dom.js';
import { CONNECTION_LIMITS, VENDORS } from '../../schema-constants.js';
import { connectionBody, stepNav, testedOk, testKey, tooLong, wire } from './common.js';

/** @typedef {import('../../types.js').WizardTextField} WizardTextField */

/** @param {import('../../types.js').WizardContext} ctx */
export function sourceStep(ctx) {
  const { s, session } = ctx;
  /** @type {Partial<Record<WizardTextField, HTMLInputElement>>} */
  const inputs = {};
  /**
   * @param {WizardTextField} key
   * @param {import('../../types.js').Attrs} [attrs]
   */
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
  // A restored draft has no password (never stored): say so instead of failing the test silently.
  const passwordHint = () => (s.secretRef ? 'Leave empty to keep the stored password.' : s.host || s.accountUrl ? 'Stored encrypted; never written to a manifest or kept in the draft: type it again after a reload.' : 'Stored encrypted; never written to a manifest.');
  const paintVendor = () => {
    render(vendorFields,
      s.vendor === 'SNOWFLAKE'
        ? [field('Account URL', input('accountUrl', { type: 'url', placeholder: 'https://<account>.snowflakecomputing.com' })), field('Warehouse', input('warehouse'))]
        : [field('Host', input('host', { placeholder: '127.0.0.1' })), field('Port', input('port', { type: 'number', min: '1', max: '65535' }))],
      field('Database', input('database')),
      field('Schema', input('schema')),
      field('Service-account user', input('username', { autocomplete: 'off' })),
      field('Password', input('password', { type: 'password', autocomplete: 'new-password' }), passwordHint()));
  };
  const collect = () => {
    s.vendor = vendor.value;
    for (const [k, el] of Object.entries(inputs)) if (el.isConnected) s[/** @type {WizardTextField} */ (k)] = el.value.trim();
  };
  /** The test result as it stands for the values now in the form. */
  const paintTest = () => {
    collect();
    const current = s.tested && s.tested.key === testKey(s);
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
    ackBox.hidden = testedOk(s);
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
    const key = testKey(s);
    test.setAttribute('aria-disabled', 'true');
    render(testOut, notice('info', 'Connecting…'));
    testOut.dataset.connected = 'testing';
    testOut.setAttribute('aria-busy', 'true');
    try {
      /** @type {import('../../types.js').Answer<import('../../types.js').ApiConnectionTest>} */
      const r = await call('POST', userPath('/v1/bi/admin/test-connection/'), { body: connectionBody(s) });
      s.tested = { key, result: r.body };
    } catch (err) {
      s.tested = { key, result: { connected: false, message: errorText(err), durationMs: 0 } };
    } finally {
      test.removeAttribute('aria-disabled');
      testOut.removeAttribute('aria-busy');
    }
    paintTest();
    ctx.save();
    // Shown problems are checked again: a successful test clears the one about it.
    test.form?.dispatchEvent(new Event('change'));
  });
  const secretsNote = session.secrets && !session.secrets.available ? notice('warn', session.secrets.problem) : null;
  const validate = () => {
    collect();
    /** @type {import('../../types.js').WizardProblem[]} */
    const problems = [];
    /** @type {[WizardTextField, string][]} */
    const required = s.vendor === 'SNOWFLAKE' ? [['accountUrl', 'Account URL']] : [['host', 'Host']];
    /** @type {[WizardTextField, string][]} */
    const others = [['database', 'Database'], ['schema', 'Schema'], ['username', 'Service-account user']];
    for (const [k, label] of [...required, ...others]) {
      if (!s[k]) problems.push({ name: k, message: `${label} is required.` });
    }
    for (const [k, el] of Object.entries(inputs)) {
      if (!el.isConnected) continue;
      /** @type {Record<string, {maxLength?: number, pattern?: string, minimum?: number, maximum?: number}>} */
      const limits = CONNECTION_LIMITS;
      const long = tooLong(s[/** @type {WizardTextField} */ (k)], limits[k], el.closest('.field')?.querySelector('label')?.textContent ?? k);
      if (long) problems.push({ name: k, message: long });
    }
    if (s.vendor === 'POSTGRESQL' && s.port && !(Number.isInteger(Number(s.port)) && Number(s.port) >= 1 && Number(s.port) <= 65535)) {
      problems.push({ name: 'port', message: 'Port must be a whole number from 1 to 65535.' });
    }
    if (!testedOk(s) && !ack.checked) {
      problems.push({
        name: 'ackNoTest',
        message: s.tested && s.tested.key === testKey(s)
          ? 'The connection test failed: fix the values and test again, or tick "Continue without a successful connection test".'
          : 'Test the connection (the values changed or were never tested), or tick "Continue without a successful connection test".',
      });
    }
    return problems;
  };
  const nav = stepNav(ctx, 0);
  const form = h('form', { class: 'panel', novalidate: true, 'aria-labelledby': 'step2-h' },
    h('h2', { tabindex: '-1', id: 'step2-h' }, '2. Data source'), summaryBox,
    field('Vendor', vendor), vendorFields, secretsNote,
    h('div', { class: 'actions' }, test), testOut, ackBox, nav.el);
  // Any change of a tested value voids the test at once.
  form.addEventListener('input', (e) => e.target !== ack && paintTest());
  paintTest();
  return wire(ctx, {
    form, summaryBox, validate, collect, step: 1,
    submit: async () => {
      s.connectionBody = connectionBody(s);
      ctx.go(2);
      return [];
    },
  });
}
