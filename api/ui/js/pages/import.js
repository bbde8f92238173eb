import { field, h, notice, render } from '../dom.js';
import { clientSteps, resultPanel, runOnboarding } from '../onboarding.js';
import { Progress } from '../progress.js';
import { isClientId } from '../schema-rules.js';

const MAX_BYTES = 1024 * 1024;

/** Import: an exported onboarding package file → onboarding, with live progress and the outcome. */
export function importPage() {
  let pkg = null;
  const file = h('input', { type: 'file', name: 'package', accept: '.json,application/json' });
  const summary = h('div', { id: 'package-summary', 'aria-live': 'polite' });
  const asId = h('input', { type: 'text', name: 'clientId', autocomplete: 'off', spellcheck: 'false' });
  const asName = h('input', { type: 'text', name: 'clientName' });
  const progressBox = h('div', { id: 'progress' });
  const resultBox = h('div');
  const submit = h('button', { type: 'submit', id: 'import', disabled: true }, 'Import');

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
      pkg = candidate;
    } catch (err) {
      return render(summary, notice('bad', `${f.name} cannot be read: ${err.message}`));
    }
    asId.value = String(pkg.clientId ?? '').toUpperCase();
    asName.value = String(pkg.clientName ?? '');
    const vdms = Array.isArray(pkg.vdm) ? pkg.vdm : [];
    const dashboards = Array.isArray(pkg.dashboards) ? pkg.dashboards : [];
    render(summary, h('dl', { class: 'facts' },
      h('dt', {}, 'File'), h('dd', {}, f.name),
      h('dt', {}, 'Client'), h('dd', {}, `${pkg.clientId ?? '—'} — ${pkg.clientName ?? '—'}`),
      h('dt', {}, 'Connection'), h('dd', { class: 'mono' }, pkg.connectionId ?? '—'),
      h('dt', {}, 'Core model'), h('dd', { class: 'mono' }, pkg.coreModelId ?? '—'),
      h('dt', {}, 'VDMs'), h('dd', {}, vdms.map((v) => v?.name ?? '?').join(', ') || '—'),
      h('dt', {}, 'Dashboards'), h('dd', {}, dashboards.map((d) => d?.name ?? '?').join(', ') || 'none')));
    submit.disabled = false;
  });

  const form = h('form', { class: 'panel', novalidate: true, 'aria-labelledby': 'import-h' },
    h('h1', { id: 'import-h' }, 'Import a client'),
    h('p', { class: 'muted' }, 'Upload an onboarding package exported from a client (Export button) or written by hand. It is onboarded exactly as the API onboards it.'),
    field('Package file (.json)', file), summary,
    h('div', { class: 'grid2' },
      field('Import as client ID', asId, 'Change it to create a copy under another ID.'),
      field('Display name', asName)),
    h('div', { class: 'actions' }, submit),
    progressBox);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!pkg) return;
    const clientId = asId.value.trim().toUpperCase();
    if (!isClientId(clientId)) return render(resultBox, notice('bad', 'Client ID: use letters, digits, "_" or "-".'));
    submit.disabled = true;
    const body = { ...pkg, clientId, clientName: asName.value.trim() || pkg.clientName };
    const progress = new Progress(clientSteps({ withConnection: false, withDashboards: Array.isArray(body.dashboards) && body.dashboards.length > 0 }));
    render(progressBox, h('h2', {}, 'Progress'), progress.el);
    render(resultBox);
    try {
      const outcome = await runOnboarding({ pkg: body, progress });
      progressBox.dataset.live = String(outcome.live);
      render(resultBox, await resultPanel(outcome, clientId));
    } catch (err) {
      render(resultBox, notice('bad', err.message));
    } finally {
      submit.disabled = false;
    }
  });
  return h('section', {}, form, resultBox);
}
