// Asks before a page with unsaved work is left: for another page of the console (app.js asks the
// guard on every route change) and for another site, a reload or a closed tab (beforeunload).
// One page at a time registers a guard; it covers the routes that are still that page.

/** @typedef {{covers: (page: string) => boolean, dirty: () => boolean, ask: () => Promise<boolean>}} LeaveGuard */

/** @type {LeaveGuard | null} */
let guard = null;

/**
 * `covers(page)`: the route still belongs to the guarding page (no question); `dirty()`: there is
 * something to lose; `ask()`: resolves true to leave.
 * @param {LeaveGuard | null} g
 */
export function setLeaveGuard(g) {
  guard = g;
}

/**
 * Whether the route to `page` may go on; a signed-out session (`login`) always may: the work is
 * kept for after the sign-in. While the question is open the address is the page's own again
 * (`stay()`); `go()` puts the asked-for one back when the answer is to leave.
 * @param {string} page
 * @param {{stay: () => void, go: () => void}} moves
 */
export async function mayLeaveFor(page, { stay, go }) {
  if (!guard || guard.covers(page)) return true;
  if (page === 'login' || !guard.dirty()) {
    guard = null;
    return true;
  }
  stay();
  const leave = await guard.ask();
  if (leave) {
    guard = null;
    go();
  }
  return leave;
}

window.addEventListener('beforeunload', (e) => {
  if (!guard?.dirty()) return;
  e.preventDefault();
  e.returnValue = '';
});
