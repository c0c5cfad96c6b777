// One dispatch for every runtime message, with sender checks (trust tiers, see shared/protocol.js):
//   content  (sender.tab set, sender.url is a web page): content:* only. It never reads the
//            token or the policy, never changes either, and never chooses a URL: url and title of
//            a capture come from sender.tab.
//   panel    (our own extension page under sidepanel/): panel:*.
// Anything else is refused.

import '../shared/protocol.js';
import * as actions from './actions.js';
import { refreshPolicy, currentPolicy, syncContentScripts, chatSiteFor } from './governance.js';
import { decide, decideWith, mayRead } from './gate.js';
import { flush, pending } from './outbox.js';
import { flushDeletes, pendingIds, scheduleDelete, undoDelete } from './library.js';
import { api, explain, baseUrl } from './server.js';
import { getLocal, setLocal, getSession, clearSession, pageMemoryOn } from './store.js';
import { linkUp } from './link.js';
import { refreshActiveTabs, invalidatePage } from './tabs.js';

const P = globalThis.WherefromProtocol;

/**
 * @typedef {import('./server.js').Failure} Failure
 * @typedef {import('./gate.js').Decision} Decision
 */

/**
 * The one shape of a server failure answered to the panel: its kind and the words for it.
 * @param {Failure} res
 * @param {Record<string, unknown>} [extra] fields of that answer (its status, its tab)
 */
function failed(res, extra = {}) {
  return { ok: false, ...failureOf(res), ...extra };
}

/** A failure's kind and words, inside a larger answer. @param {Failure} res */
function failureOf(res) {
  return { kind: res.kind, message: explain(res) };
}

/**
 * Which tier a sender belongs to, from what Chrome says about it (never from the message).
 * @param {chrome.runtime.MessageSender} sender
 * @param {string} [extensionId]
 * @param {string} [extensionOrigin] e.g. chrome-extension://<id>
 * @returns {'content' | 'panel' | null}
 */
export function senderKind(sender, extensionId = chrome.runtime.id, extensionOrigin = `chrome-extension://${chrome.runtime.id}`) {
  if (!sender || sender.id !== extensionId) return null;
  const url = typeof sender.url === 'string' ? sender.url : '';
  if (url.startsWith(`${extensionOrigin}/sidepanel/`)) return 'panel';
  if (url.startsWith(`${extensionOrigin}/`)) return null; // another page of ours: no rights
  if (sender.tab && sender.tab.id !== undefined && /^https?:/.test(url)) return 'content';
  return null;
}

/**
 * @param {unknown} message
 * @param {chrome.runtime.MessageSender} sender
 * @returns {Promise<any>}
 */
export async function dispatch(message, sender) {
  const kind = senderKind(sender);
  if (!kind) return { ok: false, error: 'sender not allowed' };
  if (kind === 'content') {
    const v = P.validate(message, 'content');
    if (!v.ok) return { ok: false, error: v.error };
    return onContent(v, /** @type {chrome.tabs.Tab} */ (sender.tab));
  }
  const v = P.validate(message, 'panel');
  if (!v.ok) return { ok: false, error: v.error };
  return onPanel(v);
}

/** @param {WfContentMessage} m @param {chrome.tabs.Tab} tab */
async function onContent(m, tab) {
  switch (m.type) {
    case P.CAPTURE_TURNS: {
      const r = await actions.forwardCapture(tab, m.payload);
      return { ok: r.ok };
    }
    case P.SELECTOR_MISS:
      await actions.recordSelectorMiss(tab, m.payload);
      return { ok: true };
    default:
      return { ok: false, error: 'unknown type' };
  }
}

/** The tab a panel request is about: the given id, else the active tab of the last focused window. @param {number} [tabId] */
async function targetTab(tabId) {
  if (typeof tabId === 'number') return chrome.tabs.get(tabId).catch(() => null);
  const [tab] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
  return tab || null;
}

/**
 * "Server not running" / "Not paired" / "Connected" — after asking the browser link (link.js)
 * when the server cannot be reached (start it) or does not know us (its token).
 */
export async function connection() {
  const conn = await check();
  if (conn.state !== 'down' && conn.state !== 'unpaired') return conn;
  const linked = await linkUp(conn.state === 'down' ? 'start' : 'locate');
  return linked.ok ? check() : conn;
}

/** The connection as it is now (no link). */
async function check() {
  const { token } = await getLocal(['token']);
  const health = await api.health();
  if (!health.ok && health.kind === 'down') return { state: 'down', message: 'Server not running' };
  if (!token) return { state: 'unpaired', message: 'Not paired' };
  const res = await refreshPolicy({ force: true });
  if (res.failure) {
    if (res.failure.kind === 'down') return { state: 'down', message: 'Server not running' };
    if (res.failure.kind === 'unpaired') return { state: 'unpaired', message: 'Not paired (the token was not accepted)' };
    return { state: 'error', message: res.failure.message };
  }
  if (res.changed) await afterPolicyChange();
  return { state: 'connected', message: 'Connected' };
}

async function afterPolicyChange() {
  await syncContentScripts();
  await refreshActiveTabs();
}

/** Everything the panel shows about one tab, decided locally. @param {chrome.tabs.Tab | null} tab */
async function tabInfo(tab) {
  if (!tab) return null;
  // the site's own level, described to the person (the page-memory switch is shown apart)
  const d = decideWith(tab.url, { memoryOn: true, policy: await currentPolicy() });
  const supported = d.reason !== 'unsupported';
  const known = supported && d.reason !== 'no-policy';
  return {
    id: tab.id,
    title: tab.title || '',
    url: d.url,
    host: d.host,
    supported,
    mode: known ? d.level : null,
    reason: supported ? d.reason : null,
    chat: mayRead(d) ? Boolean(await chatSiteFor(String(tab.url))) : false,
    notice: tab.id !== undefined ? (await getSession(`notice:${tab.id}`)) || null : null,
  };
}

/**
 * The one decision → status mapping of the panel's page views: the answer when the tab's page is
 * not to be read (memory off first, as the gate decides), or null when it may be.
 * @param {chrome.tabs.Tab | null} tab
 * @param {Decision} d the gate's decision for the tab's URL
 * @param {Awaited<ReturnType<typeof tabInfo>>} info
 */
function unreadable(tab, d, info) {
  if (d.reason === 'memory-off') return { ok: true, status: 'memory-off', ...(info ? { tab: info } : {}) };
  if (!tab || !info || d.reason === 'unsupported') return { ok: true, status: 'unsupported' };
  if (d.reason === 'no-policy') return { ok: true, status: 'not-connected', tab: info };
  if (!mayRead(d)) return { ok: true, status: 'off', tab: info };
  return null;
}

/** @param {WfPanelMessage} m */
async function onPanel(m) {
  switch (m.type) {
    case P.PANEL_OPENED: {
      const conn = await connection();
      if (conn.state === 'connected' && (await pageMemoryOn())) await flush(actions.gate, invalidatePage);
      return { ok: true, connection: conn };
    }
    case P.PANEL_GET_STATE: {
      const s = await getLocal(['token', 'pageMemory', 'disclosureAccepted', 'outbox', 'policy']);
      const memoryOn = Boolean(s.pageMemory && s.disclosureAccepted);
      return {
        ok: true,
        paired: Boolean(s.token),
        pageMemory: memoryOn,
        disclosureAccepted: s.disclosureAccepted,
        serverUrl: await baseUrl(),
        outboxCount: s.outbox.length,
        policyVersion: s.policy ? s.policy.version : null,
        link: (await getSession('link')) || null,
        tab: await tabInfo(await targetTab(m.payload.tabId)),
      };
    }
    case P.PANEL_GET_PAGE: {
      const tab = await targetTab(m.payload.tabId);
      const d = await decide(tab ? tab.url : undefined);
      const info = await tabInfo(tab);
      const not = unreadable(tab, d, info);
      if (not || !info) return not;
      const res = await api.pageMatch(info.url, actions.cut(info.title, (await actions.serverLimits()).title_chars));
      if (!res.ok) return failed(res, { status: 'error', tab: info });
      return { ok: true, status: 'ok', tab: info, match: res.data };
    }
    case P.PANEL_SAVE_NOTE: {
      const tab = await targetTab(m.payload.tabId);
      if (!tab) return { ok: false, message: 'No tab.' };
      return actions.saveNote(tab, m.payload.text);
    }
    case P.PANEL_ADD_PAGE: {
      const tab = await targetTab(m.payload.tabId);
      if (!tab) return { ok: false, message: 'No tab.' };
      return actions.addPage(tab);
    }
    case P.PANEL_FORGET_DRY_RUN: {
      const res = await api.forgetDryRun(m.payload.host);
      return res.ok ? { ok: true, ...res.data } : failed(res);
    }
    case P.PANEL_FORGET_APPLY: {
      const res = await api.forgetApply(m.payload.host, m.payload.confirm, m.payload.documents);
      if (!res.ok) return failed(res, { code: res.code });
      await clearSession(); // probe answers are stale now
      await refreshActiveTabs();
      return { ok: true, ...res.data };
    }
    case P.PANEL_FORGET_UNDO: {
      const res = await api.forgetUndo(m.payload.batch);
      if (!res.ok) return failed(res);
      await clearSession(); // probe answers are stale now
      await refreshActiveTabs();
      return { ok: true, ...res.data };
    }
    case P.PANEL_GET_POLICY: {
      const res = await refreshPolicy({ force: true });
      if (res.changed) await afterPolicyChange();
      const failure = res.failure ? failureOf(res.failure) : null;
      return { ok: Boolean(res.snapshot), policy: res.snapshot, failure };
    }
    case P.PANEL_SET_RULE: {
      const res = await api.putRule(m.payload.host, m.payload.mode);
      if (!res.ok) return failed(res);
      await refreshPolicy({ force: true });
      await afterPolicyChange();
      return { ok: true, rule: res.data };
    }
    case P.PANEL_DELETE_RULE: {
      const res = await api.deleteRule(m.payload.host);
      if (!res.ok) return failed(res);
      await refreshPolicy({ force: true });
      await afterPolicyChange();
      return { ok: true, ...res.data };
    }
    case P.PANEL_PAIR: {
      const token = m.payload.token.trim();
      if (!/^[\x21-\x7e]+$/.test(token)) return { ok: false, kind: 'bad', message: 'That does not look like a token.' };
      const res = await api.policy(token);
      if (!res.ok) return failed(res, res.kind === 'unpaired' ? { message: 'The server did not accept that token.' } : {});
      await setLocal({ token, policy: res.data });
      await afterPolicyChange();
      return { ok: true, message: 'Paired.' };
    }
    case P.PANEL_UNPAIR:
      await setLocal({ token: '', policy: null });
      await afterPolicyChange();
      return { ok: true };
    case P.PANEL_ACCEPT_DISCLOSURE:
      await setLocal({ disclosureAccepted: true, pageMemory: true });
      await refreshPolicy();
      await afterPolicyChange();
      return { ok: true };
    case P.PANEL_SET_PAGE_MEMORY: {
      const { disclosureAccepted } = await getLocal(['disclosureAccepted']);
      if (!disclosureAccepted) return { ok: false, message: 'Accept the disclosure first.' };
      await setLocal({ pageMemory: m.payload.on });
      if (m.payload.on) await refreshPolicy();
      await afterPolicyChange();
      return { ok: true };
    }
    case P.PANEL_GET_ACTIVITY: {
      const res = await api.activity(50);
      const local = await getLocal(['selectorMisses', 'outboxDropped']);
      return {
        ok: true,
        server: res.ok ? res.data.activity || [] : null,
        failure: res.ok ? null : failureOf(res),
        outbox: (await pending()).map((i) => ({ summary: i.summary, url: i.url, created: i.created, attempts: i.attempts, lastError: i.lastError || null })),
        selectorMisses: local.selectorMisses,
        dropped: local.outboxDropped,
      };
    }
    case P.PANEL_RETRY_OUTBOX: {
      if (!(await pageMemoryOn())) return { ok: false, message: 'Page memory is off.' };
      return { ok: true, ...(await flush(actions.gate, invalidatePage)) };
    }
    case P.PANEL_INSERT_TEXT: {
      const tab = await targetTab(m.payload.tabId);
      if (!tab || tab.id === undefined) return { ok: false, message: 'No tab.' };
      // memory text goes into a page only where the page may be looked at at all
      if (!mayRead(await decide(tab.url))) {
        return { ok: false, message: 'Wherefrom does not touch this page (page memory off or site off).' };
      }
      try {
        const r = await chrome.tabs.sendMessage(tab.id, { type: P.INSERT_TEXT, payload: { text: m.payload.text } });
        return r && r.ok ? { ok: true, message: 'Inserted into the composer.' } : { ok: false, message: (r && r.error) || 'No composer here.' };
      } catch {
        return { ok: false, message: 'No chat composer on this page.' };
      }
    }
    case P.PANEL_CLEAR_NOTICE:
      if (typeof m.payload.tabId === 'number') await actions.clearNotice(m.payload.tabId);
      return { ok: true };
    case P.PANEL_SEARCH: {
      const res = await api.search(m.payload.q, m.payload.limit || 30);
      if (!res.ok) return failed(res);
      const d = res.data;
      return {
        ok: true,
        results: d.results || [],
        close: d.close !== false,
        judged: d.judged !== false,
        note: d.note || '',
        meaning: d.meaning || {},
      };
    }
    case P.PANEL_GET_CONVERSATION: {
      let url = m.payload.url;
      if (url === undefined) {
        // the tab's own conversation: its URL goes to the server only where the tab may be read
        const tab = await targetTab(m.payload.tabId);
        const d = await decide(tab ? tab.url : undefined);
        const not = unreadable(tab, d, await tabInfo(tab));
        if (not) return not;
        url = d.url;
      } else if (!/^https?:\/\//i.test(url)) {
        return { ok: false, status: 'error', message: 'Only http and https pages have conversations.' };
      }
      const res = await api.conversation(url);
      if (!res.ok) return failed(res, { status: 'error' });
      return { ok: true, status: 'ok', conversation: res.data };
    }
    case P.PANEL_CONVERSATION_MARKDOWN: {
      // a conversation already on screen (its stored source_url): the server renders the file
      if (!/^https?:\/\//i.test(m.payload.url)) {
        return { ok: false, status: 'error', message: 'Only http and https pages have conversations.' };
      }
      const res = await api.conversationMarkdown(m.payload.url);
      if (!res.ok) return failed(res, { status: 'error' });
      return { ok: true, markdown: res.data.markdown, fileName: res.data.file_name };
    }
    case P.PANEL_LIST_LIBRARY: {
      await flushDeletes();
      const res = await api.library(200);
      if (!res.ok) return failed(res);
      const hidden = await pendingIds();
      return { ok: true, documents: (res.data.documents || []).filter((/** @type {any} */ d) => !hidden.has(d.id)) };
    }
    case P.PANEL_GET_DOCUMENT: {
      const res = await api.document(m.payload.id);
      return res.ok ? { ok: true, document: res.data.document } : failed(res);
    }
    case P.PANEL_DELETE_DOCUMENT:
      return scheduleDelete(m.payload.id);
    case P.PANEL_UNDO_DELETE_DOCUMENT:
      return { ok: await undoDelete(m.payload.id) };
    default:
      return { ok: false, error: 'unknown type' };
  }
}
