import { call } from '../api.js';
import { h } from '../dom.js';
import { emptyState, loadInto } from '../components/async-view.js';
import { dataTable } from '../components/data-table.js';
import { shortDigest, stateBadge } from '../components/fleet.js';
import { previewPanel, rolloutText } from './clientset.js';

const enc = encodeURIComponent;
const STATES = ['Synced', 'Pending', 'Failed', 'Invalid', 'orphaned', 'OFFBOARDED'];

/** ClientSets (`#/clientsets`): every set with its inputs, tenants per state and rollout; a preview of any manifest. */
export function clientSetsPage() {
  const box = h('div', { id: 'clientsets' });
  loadInto(box, async () => {
    /** @type {import('../types.js').Answer<import('../types.js').ApiClientSetList>} */
    const r = await call('GET', '/v1/reconciler/clientsets');
    return r.body.clientSets;
  }, view, { what: 'ClientSets' });
  return h('section', { 'aria-labelledby': 'clientsets-h', class: 'fleet' },
    h('div', { class: 'page-head' },
      h('div', { class: 'title-block' },
        h('h1', { id: 'clientsets-h' }, 'ClientSets'),
        h('p', { class: 'muted lead' }, 'Templates that stamp out tenants: one ClientSet manifest, one tenant per input, rolled out in waves.'))),
    box,
    previewPanel(null));
}

/** @param {import('../types.js').ApiClientSetSummary[]} sets */
function view(sets) {
  if (!sets.length) {
    return emptyState('No ClientSets yet', 'A ClientSet is a manifest of kind ClientSet in the manifests folder or repository (see docs/console.md). Paste one below to preview what it would create.');
  }
  return dataTable({
    caption: 'ClientSets',
    id: 'clientset-table',
    columns: [{ label: 'ClientSet' }, { label: 'Policy' }, { label: 'Inputs', class: 'num' }, { label: 'Tenants' }, { label: 'Rollout' }, { label: 'Digest' }],
    rows: sets.map((s) => ({
      attrs: { dataset: { clientset: s.name } },
      cells: [
        h('div', { class: 'name-cell' }, h('a', { href: `#/clientsets/${enc(s.name)}`, class: 'strong' }, s.name), s.present ? null : h('span', { class: 'small warn-text' }, 'file removed')),
        h('span', { class: 'tag' }, s.policy),
        String(s.inputs),
        h('ul', { class: 'state-counts' }, STATES.filter((st) => s.states[st]).map((st) => h('li', {}, stateBadge(st, `${s.states[st]} ${st}`)))),
        rolloutText(s.rollout),
        shortDigest(s.digest),
      ],
    })),
  });
}
