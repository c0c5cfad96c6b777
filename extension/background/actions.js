// Writes that carry a page: notes, selections, captures, "add this page to library".
// Each is checked locally first (page memory on, the site `collect`), then sent with an
// Idempotency-Key; when the server is down the write waits in the outbox.

import { currentPolicy, siteMatchesUrl } from './governance.js';
import { decide, mayWrite } from './gate.js';
import { enqueue } from './outbox.js';
import { api, explain } from './server.js';
import { setSession, removeSession, getLocal, setLocal } from './store.js';
import { invalidatePage } from './tabs.js';
import { capChars, capMarkdown } from '../shared/text.js';
import { dropTracking } from '../shared/urls.js';
import { mapMarkdownLinks } from '../shared/mdlinks.js';
import '../shared/protocol.js';

const P = globalThis.WherefromProtocol;

/**
 * The server's caps, from the policy snapshot it serves (server/limits.py owns them): what we send
 * is cut to them — a longer turn is kept cut rather than losing its whole conversation to a 413.
 * A snapshot without them (an older server) means nothing is cut here and the server's answer says why.
 * @returns {Promise<Record<string, number>>}
 */
export async function serverLimits() {
  const policy = await currentPolicy();
  return (policy && policy.limits) || {};
}

/** @param {string} text @param {number | undefined} limit */
export const cut = (text, limit) => (typeof limit === 'number' ? capChars(text, limit) : text);

/**
 * @typedef {{ok: boolean, queued?: boolean, kind?: string, message: string, data?: any, status?: number}} WriteResult
 */

/**
 * The local gate of every write: page memory on and the page's site `collect`.
 * @param {string | undefined} rawUrl
 * @returns {Promise<{ok: true, url: string, host: string} | {ok: false, message: string, kind: string}>}
 */
export async function gate(rawUrl) {
  const d = await decide(rawUrl);
  if (mayWrite(d)) return { ok: true, url: d.url, host: d.host };
  if (d.reason === 'memory-off') return { ok: false, kind: 'memory-off', message: 'Page memory is off — nothing is saved. Turn it on in Settings.' };
  if (d.reason === 'unsupported') return { ok: false, kind: 'unsupported', message: 'This page cannot be remembered (only http and https pages can).' };
  if (d.reason === 'no-policy') return { ok: false, kind: 'unpaired', message: 'Not connected — pair with the server in Settings first.' };
  return { ok: false, kind: 'refused', message: `Not saved: ${d.host} is "${d.level}" (${d.reason}), so nothing is written from it.` };
}

/**
 * Send one write; queue it when the server is down.
 * @param {'notes' | 'clips' | 'captures' | 'add_text'} route
 * @param {Record<string, unknown>} body
 * @param {string} summary for the outbox list
 * @param {{queue?: boolean}} [opts]
 * @returns {Promise<WriteResult>}
 */
async function send(route, body, summary, opts = {}) {
  const key = crypto.randomUUID();
  const res = await api.write(route, body, key);
  if (res.ok) {
    await invalidatePage(String(body.url));
    return { ok: true, message: 'Saved.', data: res.data, status: res.status };
  }
  if (res.kind === 'down' && opts.queue !== false) {
    await enqueue(route, body, key, summary);
    return { ok: true, queued: true, kind: 'down', message: 'Server not running — kept in the outbox; it will be delivered when the server is back.' };
  }
  return { ok: false, kind: res.kind, message: explain(res) };
}

/** @param {chrome.tabs.Tab} tab @param {string} text */
export async function saveNote(tab, text) {
  const g = await gate(tab.url);
  if (!g.ok) return g;
  const lim = await serverLimits();
  return send('notes', { url: g.url, title: cut(tab.title || '', lim.title_chars), text: cut(text, lim.note_chars) }, `Note on ${g.host}`);
}

/** @param {chrome.tabs.Tab} tab @param {string} text */
export async function saveClip(tab, text) {
  const g = await gate(tab.url);
  if (!g.ok) return g;
  const lim = await serverLimits();
  return send('clips', { url: g.url, title: cut(tab.title || '', lim.title_chars), text: cut(text, lim.note_chars) }, `Selection from ${g.host}`);
}

/**
 * Read the page's HTML in the tab (activeTab or host permission) and add it to the library.
 * @param {chrome.tabs.Tab} tab
 */
export async function addPage(tab) {
  const g = await gate(tab.url);
  if (!g.ok || tab.id === undefined) return g.ok ? { ok: false, kind: 'bad', message: 'No tab.' } : g;
  let html;
  try {
    const [frame] = await chrome.scripting.executeScript({
      target: { tabId: tab.id },
      func: () => document.documentElement.outerHTML,
    });
    html = frame && typeof frame.result === 'string' ? cut(frame.result, (await serverLimits()).page_html_chars) : '';
  } catch (err) {
    return { ok: false, kind: 'bad', message: 'Chrome lets Wherefrom read this page only after you click the Wherefrom toolbar icon or press Alt+Shift+S on it.' };
  }
  if (!html) return { ok: false, kind: 'bad', message: 'The page has no content to save.' };
  // the tab may have navigated while we read it: the URL the HTML belongs to is checked again
  const now = await chrome.tabs.get(tab.id).catch(() => null);
  if (!now || now.url !== tab.url) return { ok: false, kind: 'bad', message: 'The page changed while it was being read; try again.' };
  // a page's HTML is too big to keep in the outbox (storage quota): a down server is said, not queued
  const res = await send('add_text', { url: g.url, title: cut(tab.title || '', (await serverLimits()).title_chars), html }, `Page ${g.host}`, { queue: false });
  if (res.ok && !res.queued) res.message = res.status === 200 ? 'Already in the library.' : 'Added to the library.';
  return res;
}

/**
 * content:capture-turns → POST /api/captures with url/title from sender.tab.
 * @param {chrome.tabs.Tab} tab
 * @param {WfPayloads['content:capture-turns']} payload
 */
export async function forwardCapture(tab, payload) {
  const g = await gate(tab.url);
  if (!g.ok) return { ok: false, kind: g.kind, message: 'capture not forwarded' }; // silently dropped, nothing sent
  if (!(await siteMatchesUrl(payload.site, String(tab.url)))) return { ok: false, kind: 'bad', message: 'site does not match the tab' };
  const lim = await serverLimits();
  const kept = payload.turns.filter((t) => t.text.trim() !== '');
  // a thread longer than one capture may carry: its newest turns (the server lines them up)
  const window = typeof lim.turns === 'number' ? kept.slice(-lim.turns) : kept;
  const turns = window.map((t) => {
    /** @type {Record<string, string>} */
    const out = { role: t.role, text: cut(t.text, lim.turn_chars) };
    if (typeof t.markdown === 'string' && t.markdown.trim()) {
      // links lose their tracking parameters (the one URL rule); a cut never leaves a fence open
      const md = mapMarkdownLinks(t.markdown, dropTracking);
      out.markdown = typeof lim.markdown_chars === 'number' ? capMarkdown(md, lim.markdown_chars) : md;
    }
    if (t.native_id) out.native_id = t.native_id;
    return out;
  });
  if (!turns.length) return { ok: true, message: 'nothing to capture' };
  return send('captures', { url: g.url, title: cut(tab.title || '', lim.title_chars), site: payload.site, turns }, `Conversation on ${g.host}`, {
    queue: payload.settled !== false,
  });
}

/**
 * content:selector-miss: remembered locally for the Activity view (and logged). Nothing is sent.
 * @param {chrome.tabs.Tab} tab
 * The kind (`no_turns`, `missing_role`, `empty_turn`), the layouts tried and the URL's path
 * pattern come from the content script; never page text.
 * @param {WfPayloads['content:selector-miss']} payload
 */
export async function recordSelectorMiss(tab, payload) {
  const d = await decide(tab.url);
  const { selectorMisses } = await getLocal(['selectorMisses']);
  // the detail is bounded by the protocol (shared/protocol.js); cut again here, the one writer
  const detail = typeof payload.detail === 'string' ? capChars(payload.detail, P.LIMITS.detail, { ellipsis: true }) : null;
  const miss = {
    at: Date.now(), site: payload.site, kind: payload.kind || 'no_turns', layouts: payload.layouts || [],
    path: payload.path || '', url: d.url, host: d.host, detail,
  };
  console.warn('wherefrom: selector miss', miss);
  await setLocal({ selectorMisses: [...selectorMisses, miss].slice(-50) });
  return { ok: true, message: 'noted' };
}

/**
 * Tell the person why a write from the toolbar / context menu / shortcut did not happen (or did):
 * a badge on the tab, the action's title, and a notice the side panel shows.
 * @param {number | undefined} tabId
 * @param {WriteResult | {ok: boolean, message: string, queued?: boolean}} result
 */
export async function notify(tabId, result) {
  if (tabId === undefined) return;
  const text = result.ok ? (result.queued ? '…' : '✓') : '!';
  const color = result.ok ? (result.queued ? '#8a6d00' : '#2b8a3e') : '#c92a2a';
  try {
    await chrome.action.setBadgeBackgroundColor({ tabId, color });
    await chrome.action.setBadgeText({ tabId, text });
    await chrome.action.setTitle({ tabId, title: `Wherefrom — ${result.message}` });
  } catch {
    // tab gone
  }
  await setSession(`notice:${tabId}`, { at: Date.now(), ok: result.ok, queued: Boolean(result.queued), message: result.message });
}

/** @param {number} tabId */
export async function clearNotice(tabId) {
  await removeSession(`notice:${tabId}`);
  try {
    await chrome.action.setBadgeText({ tabId, text: '' });
  } catch {
    // tab gone
  }
}
