// The side panel's shell: the views, the disclosure gate, and start-up. Each view lives in
// views/<name>.js and exports its render function; add a view by adding a module, a tab button
// and a section in index.html, and one line in VIEWS.

import { $ } from './dom.js';
import { P, hooks, loadState, params, send, showConnection, tabId, ui } from './state.js';
import { initMemory, renderMemory } from './views/memory.js';
import { renderActivity } from './views/activity.js';
import { initSettings, renderSettings } from './views/settings.js';
import { initSearch, renderSearch } from './views/search.js';
import { initConversation, renderConversation } from './views/conversation.js';
import { renderLibrary } from './views/library.js';

/** @type {Record<string, () => Promise<void>>} */
const VIEWS = {
  memory: renderMemory,
  search: renderSearch,
  conversation: renderConversation,
  library: renderLibrary,
  activity: renderActivity,
  settings: renderSettings,
};

/** Views with a tab of their own (the conversation view is reached from Memory and Search). */
const TAB_VIEWS = { memory: 1, search: 1, library: 1, activity: 1, settings: 1 };

/** @param {string} name */
function showView(name) {
  ui.view = name in VIEWS ? name : 'memory';
  for (const b of document.querySelectorAll('nav.tabs button')) {
    const on = /** @type {HTMLElement} */ (b).dataset.view === ui.view;
    b.setAttribute('aria-selected', String(on));
    b.setAttribute('tabindex', on || !(ui.view in TAB_VIEWS) && b.getAttribute('data-view') === 'memory' ? '0' : '-1');
  }
  for (const v of document.querySelectorAll('section.view')) {
    /** @type {HTMLElement} */ (v).hidden = /** @type {HTMLElement} */ (v).dataset.view !== ui.view;
  }
  render();
}

async function render() {
  const s = ui.state || (await loadState());
  $('disclosure').hidden = s.disclosureAccepted || ui.disclosureDismissed;
  document.body.classList.toggle('gated', !s.disclosureAccepted && !ui.disclosureDismissed);
  await VIEWS[ui.view]();
}

async function refreshAll() {
  await loadState();
  await render();
}

/** Panel opened (or pairing changed): connection check, policy version check, outbox delivery. */
async function opened() {
  const r = await send(P.PANEL_OPENED);
  if (r && r.connection) showConnection(r.connection);
  await refreshAll();
}

hooks.refreshAll = refreshAll;
hooks.showView = showView;
initMemory();
initSettings(opened);
initSearch();
initConversation();

/** A view asked for by a keyboard command (background/main.js writes it as it opens the panel). */
async function takeAskedView() {
  const { panelView } = /** @type {{panelView?: {view: string, at: number}}} */ (await chrome.storage.session.get('panelView'));
  if (!panelView || !(panelView.view in VIEWS)) return;
  await chrome.storage.session.remove('panelView');
  if (Date.now() - Number(panelView.at) < 60_000) showView(panelView.view);
}
chrome.storage.onChanged.addListener((changes, area) => {
  if (area === 'session' && changes.panelView && changes.panelView.newValue) takeAskedView();
  // the worker is having the browser link start the server: say so until it answers
  if (area === 'session' && changes.serverStarting && changes.serverStarting.newValue) showConnection({ state: 'starting', message: '' });
});

$('accept').addEventListener('click', async () => {
  await send(P.PANEL_ACCEPT_DISCLOSURE);
  await opened(); // now the browser link may pair (and start the server)
});

$('not-now').addEventListener('click', async () => {
  ui.disclosureDismissed = true;
  await render();
});

for (const b of document.querySelectorAll('nav.tabs button')) {
  b.addEventListener('click', () => showView(/** @type {string} */ (/** @type {HTMLElement} */ (b).dataset.view)));
}
// the tab list's keys (WAI-ARIA tabs): Left/Right (wrapping), Home/End move to a tab and show it
$('nav-tabs').addEventListener('keydown', (ev) => {
  const tabs = /** @type {HTMLElement[]} */ ([...document.querySelectorAll('nav.tabs button')]);
  const at = tabs.indexOf(/** @type {HTMLElement} */ (document.activeElement));
  if (at < 0) return;
  const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }[ev.key];
  if (to === undefined) return;
  ev.preventDefault();
  const next = tabs[(to + tabs.length) % tabs.length];
  showView(/** @type {string} */ (next.dataset.view));
  next.focus();
});

chrome.tabs.onActivated.addListener(() => {
  if (!params.get('tabId')) refreshAll();
});
chrome.tabs.onUpdated.addListener(async (id, change) => {
  if ((change.url || change.status === 'complete') && id === (await tabId())) refreshAll();
});

showView(ui.view);
chrome.storage.session.get('serverStarting').then((got) => {
  if (got.serverStarting) showConnection({ state: 'starting', message: '' });
});
opened();
takeAskedView();
