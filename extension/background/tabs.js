// Per-tab handling: resolve the mode locally first; only a tab whose site is not `off`, with page
// memory on, is ever probed. The probe answer is cached per normalised URL for 30 s in
// chrome.storage.session and dropped when we write something about that page.

import { decide, mayRead, mayWrite } from './gate.js';
import { chatSiteFor, loadContentFiles } from './governance.js';
import { setTabIcon } from './icon.js';
import { api } from './server.js';
import { tryNormaliseUrl } from '../shared/urls.js';
import { getSession, setSession, removeSession } from './store.js';

export const PROBE_TTL_MS = 30_000;

/** @param {string} url a normalised URL */
const probeKey = (url) => `probe:${url}`;

/**
 * The probe answer for a page, from the cache or the server. Callers have checked the mode.
 * @param {string} url normalised
 */
export async function probe(url) {
  const cached = await getSession(probeKey(url));
  if (cached && Date.now() - cached.at < PROBE_TTL_MS) return cached.answer;
  const res = await api.probe(url);
  if (!res.ok) return { unreachable: true, kind: res.kind };
  await setSession(probeKey(url), { at: Date.now(), answer: res.data });
  return res.data;
}

/** Drop the cached probe of a page and redraw the tabs showing it. @param {string} url normalised */
export async function invalidatePage(url) {
  await removeSession(probeKey(url));
  const tabs = await chrome.tabs.query({});
  for (const t of tabs) {
    if (t.id !== undefined && t.url && tryNormaliseUrl(t.url) === url) await refreshTab(t.id, t);
  }
}

/**
 * Decide and draw a tab's state. Nothing leaves the browser unless page memory is on and the
 * site's mode (resolved here, from the local snapshot) is not `off`.
 * @param {number} tabId
 * @param {chrome.tabs.Tab} [known]
 */
export async function refreshTab(tabId, known) {
  let tab = known;
  if (!tab) {
    try {
      tab = await chrome.tabs.get(tabId);
    } catch {
      return;
    }
  }
  const d = await decide(tab.url);
  if (!mayRead(d)) {
    if (d.reason === 'memory-off') await setTabIcon(tabId, 'neutral', 'Wherefrom — page memory is off');
    else if (d.reason === 'unsupported') await setTabIcon(tabId, 'neutral', 'Wherefrom — this page cannot be remembered');
    else if (d.reason === 'no-policy') await setTabIcon(tabId, 'neutral', 'Wherefrom — not connected');
    else await setTabIcon(tabId, 'off', `Wherefrom — off for ${d.host} (${d.reason})`);
    return;
  }
  const answer = await probe(d.url);
  if (answer.unreachable) {
    // "server down" is not "nothing stored": say which
    const why = answer.kind === 'down' ? 'server not running' : answer.kind === 'unpaired' ? 'not paired' : 'server did not answer';
    await setTabIcon(tabId, 'neutral', `Wherefrom — ${why}`);
  } else if (answer.green) {
    const n = (answer.exact || 0) + (answer.documents || 0);
    await setTabIcon(tabId, 'green', `Wherefrom — ${n} item${n === 1 ? '' : 's'} from this page`);
  } else {
    await setTabIcon(tabId, 'neutral', `Wherefrom — ${d.level} on ${d.host}`);
  }
}

/** Redraw the active tab of every window. */
export async function refreshActiveTabs() {
  const tabs = await chrome.tabs.query({ active: true });
  for (const t of tabs) if (t.id !== undefined) await refreshTab(t.id, t);
}

/**
 * A chat tab that may be captured runs the capture script. Registered scripts reach only pages
 * loaded after the registration, so a tab already open when its site became `collect` (or a load
 * that raced the registration) gets the same files injected once; they return early where they
 * already run (content/namespace.js). The same gate as every write: page memory on, `collect`.
 * @param {chrome.tabs.Tab} tab
 */
export async function ensureCapture(tab) {
  if (tab.id === undefined || !tab.url || tab.status !== 'complete') return;
  if (!mayWrite(await decide(tab.url)) || !(await chatSiteFor(tab.url))) return;
  const files = await loadContentFiles();
  if (!files) return;
  try {
    const [running] = await chrome.scripting.executeScript({
      target: { tabId: tab.id },
      func: () => Boolean(globalThis.Wherefrom && Object.isFrozen(globalThis.Wherefrom)),
    });
    if (running && running.result) return;
    await chrome.scripting.executeScript({ target: { tabId: tab.id }, files });
  } catch {
    // the tab navigated away meanwhile, or its page cannot be scripted: nothing to do
  }
}

/** Every open tab that may be captured runs the capture script (after a rule or switch change). */
export async function ensureCaptureEverywhere() {
  for (const t of await chrome.tabs.query({})) await ensureCapture(t);
}
