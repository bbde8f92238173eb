// The New client wizard's draft: what was typed, kept in this tab's sessionStorage so Back, reload,
// a visit to another page and a session that ended (sign in again, come back) keep it. The
// password and the Test Connection result (tied to the password) stay in memory only: never stored.
import { getSession } from '../../api.js';

const KEY = 'bi-controller.wizard-draft';
/** What is never written to sessionStorage. */
const SECRET = ['password', 'tested'];
/** In memory for this tab's life: the secrets of the current draft. */
/** @type {Pick<import('../../types.js').WizardDraft, 'password' | 'tested'>} */
const memory = { password: '', tested: null };

/**
 * @param {import('../../types.js').WizardContext['models']} models
 * @returns {import('../../types.js').WizardDraft}
 */
export function emptyDraft(models) {
  return {
    step: 0,
    /** The furthest step whose predecessors were passed: a step past it is not shown. */
    reached: 0,
    clientId: '', clientName: '', description: '', idState: 'empty',
    vendor: 'POSTGRESQL', accountUrl: '', host: '', port: '5432', warehouse: '', database: '', schema: '', username: '', password: '',
    /** The last Test Connection: the values it tested (`key`) and its answer; any change of a value voids it. */
    tested: null, ackNoTest: false,
    coreModelId: models[0]?.modelId ?? '', rls: true, vdmName: '', columns: null, dashboard: true,
    /** The measure and dimension as chosen: kept when their column is unchecked and restored when it comes back. */
    measure: '', dimension: '', measureChoice: null, dimensionChoice: null,
    connectionId: undefined, secretRef: undefined, connectionBody: undefined,
    /** Problems the server found for a step (dry run): shown when the step is shown. */
    serverProblems: { 0: [], 1: [], 2: [], 3: [] },
  };
}

/**
 * The draft of this tab for the signed-in user, or a new one.
 * @param {import('../../types.js').WizardContext['models']} models
 * @returns {import('../../types.js').WizardDraft}
 */
export function loadDraft(models) {
  const fresh = emptyDraft(models);
  try {
    const stored = JSON.parse(sessionStorage.getItem(KEY) ?? 'null');
    if (!stored || stored.userId !== getSession()?.userId) return fresh;
    return { ...fresh, ...stored.draft, password: memory.password, tested: memory.tested };
  } catch {
    return fresh;
  }
}

/**
 * Keeps the draft (without its secrets, which stay in memory).
 * @param {import('../../types.js').WizardDraft} s
 */
export function saveDraft(s) {
  memory.password = s.password;
  memory.tested = s.tested;
  const draft = Object.fromEntries(Object.entries(s).filter(([k]) => !SECRET.includes(k)));
  if (s.connectionBody) draft.connectionBody = { ...s.connectionBody, password: undefined };
  try {
    sessionStorage.setItem(KEY, JSON.stringify({ userId: getSession()?.userId, draft }));
  } catch {
    // A full or disabled storage: the draft lives as long as the page.
  }
}

export function discardDraft() {
  memory.password = '';
  memory.tested = null;
  sessionStorage.removeItem(KEY);
}

/** Whether anything was typed that leaving would put aside (the draft is kept, but the person should know). */
export function hasDraft() {
  try {
    const stored = JSON.parse(sessionStorage.getItem(KEY) ?? 'null');
    const d = stored?.draft;
    return Boolean(d && stored.userId === getSession()?.userId && (d.clientId || d.clientName || d.description || d.host || d.accountUrl || d.database || d.username));
  } catch {
    return false;
  }
}
