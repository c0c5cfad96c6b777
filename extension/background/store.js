// State lives in chrome.storage, never in module globals (the worker may be evicted any time).
//   local:   token, serverUrl, pageMemory, disclosureAccepted, policy, outbox, outboxDropped,
//            selectorMisses, libraryPendingDeletes
//   session: probe:<normalised url> (30 s probe cache), notice:<tabId> (why a write was refused),
//            panelView (the view a keyboard command asked the panel for; sidepanel/panel.js reads it),
//            serverStarting, link (the browser link's last answer, link.js)
// Every key of the worker goes through this module.

export const DEFAULT_SERVER_URL = 'http://127.0.0.1:37711';

/**
 * @typedef {{
 *   token: string, serverUrl: string, pageMemory: boolean, disclosureAccepted: boolean,
 *   policy: import('../shared/resolver.js').PolicySnapshot | null,
 *   outbox: OutboxItem[], outboxDropped: OutboxDropped[], selectorMisses: SelectorMiss[],
 *   libraryPendingDeletes: Record<string, number>
 * }} LocalState
 * @typedef {{at: number, summary: string, url: string, reason: string}} OutboxDropped
 * @typedef {{key: string, route: string, body: Record<string, unknown>, url: string, summary: string,
 *   created: number, attempts: number, lastError?: string}} OutboxItem
 * @typedef {{at: number, site: string, url: string, host: string, detail: unknown}} SelectorMiss
 */

/** @type {LocalState} */
const DEFAULTS = {
  token: '',
  serverUrl: DEFAULT_SERVER_URL,
  pageMemory: false,
  disclosureAccepted: false,
  policy: null,
  outbox: [],
  outboxDropped: [],
  selectorMisses: [],
  libraryPendingDeletes: {},
};

/**
 * @template {keyof LocalState} K
 * @param {K[]} keys
 * @returns {Promise<Pick<LocalState, K>>}
 */
export async function getLocal(keys) {
  const got = await chrome.storage.local.get(keys);
  /** @type {any} */
  const out = {};
  for (const k of keys) out[k] = got[k] === undefined ? structuredClone(DEFAULTS[k]) : got[k];
  return out;
}

/** @param {Partial<LocalState>} values */
export function setLocal(values) {
  return chrome.storage.local.set(values);
}

/** Page memory is on only after the disclosure was accepted. */
export async function pageMemoryOn() {
  const { pageMemory, disclosureAccepted } = await getLocal(['pageMemory', 'disclosureAccepted']);
  return Boolean(pageMemory && disclosureAccepted);
}

/** @param {string} key */
export async function getSession(key) {
  /** @type {Record<string, any>} */
  const got = await chrome.storage.session.get(key);
  return got[key];
}

/** @param {string} key @param {unknown} value */
export function setSession(key, value) {
  return chrome.storage.session.set({ [key]: value });
}

/** @param {string | string[]} key */
export function removeSession(key) {
  return chrome.storage.session.remove(key);
}

/** Drop every session key (probe answers, notices) at once. */
export function clearSession() {
  return chrome.storage.session.clear().catch(() => undefined);
}
