// Governance first: the mode of a tab is resolved here, locally, from the cached policy snapshot,
// before anything about the tab is sent anywhere. Fetching the snapshot itself carries no page.

import '../shared/sites.js';
import { resolve } from '../shared/resolver.js';
import { api } from './server.js';
import { getLocal, setLocal, pageMemoryOn } from './store.js';

/**
 * @typedef {import('../shared/resolver.js').PolicySnapshot} PolicySnapshot
 * @typedef {{id: string, name?: string, hosts?: string[], matches: string[]}} SiteEntry
 */

const Sites = globalThis.WherefromSites;

/** @type {Promise<unknown>} */
let policyChain = Promise.resolve();

/**
 * Fetch GET /api/policy and store it when its version changed. Returns the snapshot in storage
 * (possibly the old one when the server cannot be reached).
 * @param {{force?: boolean}} [opts] force: fetch even with page memory off (a panel action)
 * @returns {Promise<{snapshot: PolicySnapshot | null, changed: boolean, failure?: import('./server.js').Failure}>}
 */
export function refreshPolicy(opts = {}) {
  // refreshes run one at a time, in the order asked: an answer fetched before a rule edit can
  // never be written over the one fetched after it (a transient chain, not state)
  const run = policyChain.then(() => refreshOnce(opts), () => refreshOnce(opts));
  policyChain = run.catch(() => undefined);
  return run;
}
/** @param {{force?: boolean}} opts */
async function refreshOnce(opts) {
  const { policy, token } = await getLocal(['policy', 'token']);
  if (!token || (!opts.force && !(await pageMemoryOn()))) return { snapshot: policy, changed: false };
  const res = await api.policy();
  if (!res.ok) return { snapshot: policy, changed: false, failure: res };
  const fresh = /** @type {PolicySnapshot} */ (res.data);
  const changed = !policy || policy.version !== fresh.version;
  if (changed) await setLocal({ policy: fresh });
  return { snapshot: fresh, changed };
}

/** The cached snapshot, fetching it once when there is none yet. */
export async function currentPolicy() {
  const { policy } = await getLocal(['policy']);
  if (policy) return policy;
  return (await refreshPolicy()).snapshot;
}

// ---------------------------------------------------------------- capture content scripts

const SCRIPT_PREFIX = 'wf-site-';

/** @returns {Promise<SiteEntry[]>} */
export async function loadRegistry() {
  try {
    const resp = await fetch(chrome.runtime.getURL('sites/registry.json'));
    if (!resp.ok) return [];
    const data = await resp.json();
    const sites = Array.isArray(data) ? data : data.sites;
    return Array.isArray(sites) ? sites.filter((s) => s && typeof s.id === 'string' && Array.isArray(s.matches)) : [];
  } catch {
    return [];
  }
}

/** The ordered content-script files (paths relative to extension/), or null until they exist. */
export async function loadContentFiles() {
  try {
    const resp = await fetch(chrome.runtime.getURL('content/files.json'));
    if (!resp.ok) return null;
    const files = await resp.json();
    const list = Array.isArray(files) ? files : files && files.files;
    return Array.isArray(list) && list.length && list.every((f) => typeof f === 'string') ? list : null;
  } catch {
    return null;
  }
}

/**
 * Which match patterns of which sites get the capture script: only hosts resolving to `collect`,
 * only with page memory on.
 * @param {SiteEntry[]} sites
 * @param {PolicySnapshot | null} policy
 * @param {boolean} memoryOn
 */
export function wantedScripts(sites, policy, memoryOn) {
  /** @type {Map<string, string[]>} */
  const wanted = new Map();
  if (!memoryOn || !policy) return wanted;
  for (const site of sites) {
    const matches = site.matches.filter((p) => {
      const host = Sites.patternHost(p);
      return host !== '' && resolve(host, policy).mode === 'collect';
    });
    if (matches.length) wanted.set(SCRIPT_PREFIX + site.id, matches);
  }
  return wanted;
}

// Syncs run one at a time: two overlapping runs would unregister each other's scripts
// ("Nonexistent script ID"). A transient chain, not state: losing it on eviction is harmless.
/** @type {Promise<unknown>} */
let syncChain = Promise.resolve();

/** Register / unregister the capture scripts to match the policy and the page-memory switch. */
export function syncContentScripts() {
  const run = syncChain.then(syncOnce, syncOnce);
  syncChain = run.catch(() => undefined);
  return run;
}

async function syncOnce() {
  const memoryOn = await pageMemoryOn();
  const { policy } = await getLocal(['policy']);
  const files = await loadContentFiles();
  const wanted = files ? wantedScripts(await loadRegistry(), policy, memoryOn) : new Map();
  const existing = (await chrome.scripting.getRegisteredContentScripts()).filter((s) => s.id.startsWith(SCRIPT_PREFIX));
  const same = (/** @type {chrome.scripting.RegisteredContentScript} */ s) => {
    const want = wanted.get(s.id);
    return want && JSON.stringify(want) === JSON.stringify(s.matches) && JSON.stringify(files) === JSON.stringify(s.js);
  };
  const stale = existing.filter((s) => !same(s)).map((s) => s.id);
  for (const id of stale) {
    try {
      await chrome.scripting.unregisterContentScripts({ ids: [id] });
    } catch (err) {
      if (!String(err).includes('Nonexistent')) throw err; // already gone: what we wanted
    }
  }
  const keep = new Set(existing.filter(same).map((s) => s.id));
  for (const [id, matches] of wanted) {
    if (keep.has(id)) continue;
    try {
      await chrome.scripting.registerContentScripts([
        { id, matches, js: /** @type {string[]} */ (files), runAt: 'document_idle', allFrames: false, persistAcrossSessions: true },
      ]);
    } catch (err) {
      console.warn('wherefrom: cannot register capture script', id, err);
    }
  }
  return { registered: [...wanted.keys()] };
}

/**
 * The registry's chat site for a page, or null: the one matcher content scripts use too
 * (shared/sites.js, by match pattern: host and path).
 * @param {string} url
 * @returns {Promise<SiteEntry | null>}
 */
export async function chatSiteFor(url) {
  return Sites.siteFor(url, await loadRegistry());
}

/**
 * Is this site id the registry's entry for this page? (a content script cannot claim another site)
 * @param {string} siteId
 * @param {string} url
 */
export async function siteMatchesUrl(siteId, url) {
  const site = await chatSiteFor(url);
  return site !== null && site.id === siteId;
}
