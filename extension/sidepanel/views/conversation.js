// Conversation view: the whole captured conversation of the current chat page, or of one opened
// from Search (ui.conversation.url), in order, with its URL, site and capture time; copy it as
// Markdown, or save it as a .md file (a Blob and a download link: no permission needed). The
// file is the server's — the one conversation renderer the export and MCP use, asked through
// the worker — so the panel renders no Markdown file of its own.
//
// A turn with other versions (a regenerated reply, an edited message) says "2 of 3" with
// buttons that show the others in its place; the version the conversation shows is marked.
//
// A turn renders as Markdown (markdown.js: marked + DOMPurify) when the server gives its Markdown
// (`markdown`); a turn stored before Markdown was kept renders as its plain text. renderTurn is
// the one place that decides.

import { $, el, webUrl } from '../dom.js';
import { P, hooks, send, tabId, ui } from '../state.js';
import { renderMarkdown } from '../markdown.js';

/**
 * One turn's body: rendered Markdown (sanitized) or its plain text.
 * @param {{text: string, markdown?: string | null}} turn
 */
export function renderTurn(turn) {
  if (typeof turn.markdown === 'string' && turn.markdown.trim()) {
    return el('div', { class: 'turn-body md' }, [renderMarkdown(turn.markdown)]);
  }
  return el('div', { class: 'turn-body plain', text: turn.text });
}

/** @type {any} the conversation on screen (for copy and save) */
let shown = null;
/** @type {Promise<any> | null} its Markdown file, asked for as soon as it is shown */
let file = null;

/**
 * A turn's versions in order, the one shown among them: [{text, markdown, version}], index.
 * @param {any} t a turn of GET /api/conversations (others: its other versions)
 */
export function versionsOf(t) {
  const all = [{ text: t.text, markdown: t.markdown, version: t.version, date: t.date }, ...(t.others || [])];
  all.sort((a, b) => a.version - b.version);
  return { all, at: all.findIndex((v) => v.version === t.version) };
}

/** The "2 of 3" control of a turn with versions: flips the body in place. @param {any} t */
function versionControl(t) {
  const { all, at } = versionsOf(t);
  let i = at;
  const label = el('span', { class: 'version-label' });
  const body = el('div', { class: 'turn-version' }, [renderTurn(t)]);
  const prev = el('button', { class: 'version-prev', text: '‹', attrs: { type: 'button', 'aria-label': 'Previous version' } });
  const next = el('button', { class: 'version-next', text: '›', attrs: { type: 'button', 'aria-label': 'Next version' } });
  const show = () => {
    label.textContent = `${all[i].version} of ${all.length}${i === at ? '' : ` (shown: ${all[at].version})`}`;
    body.replaceChildren(renderTurn(all[i]));
    prev.toggleAttribute('disabled', i === 0);
    next.toggleAttribute('disabled', i === all.length - 1);
  };
  prev.addEventListener('click', () => { if (i > 0) { i -= 1; show(); } });
  next.addEventListener('click', () => { if (i < all.length - 1) { i += 1; show(); } });
  show();
  return { bar: el('div', { class: 'versions', attrs: { role: 'group', 'aria-label': 'Versions of this turn' } }, [prev, label, next]), body };
}

/** The conversation's Markdown file from the server (through the worker). @param {string} url */
async function fetchFile(url) {
  const r = await send(P.PANEL_CONVERSATION_MARKDOWN, { url });
  if (!r || !r.ok) throw new Error((r && r.message) || 'Could not get the Markdown.');
  return /** @type {{markdown: string, fileName: string}} */ (r);
}

/** @param {string} text @param {string} [tone] */
function say(text, tone = '') {
  $('conv-status').textContent = text;
  $('conv-status').dataset.tone = tone;
}

export async function renderConversation() {
  const head = $('conv-head');
  const list = $('conv-turns');
  const fromSearch = ui.conversation ? ui.conversation.url : '';
  $('conv-back').hidden = !(ui.conversation && ui.conversation.from === 'search');
  $('conv-actions').hidden = true;
  head.replaceChildren(el('p', { class: 'muted', text: 'Loading…' }));
  list.replaceChildren();
  say('');
  shown = null;
  file = null;
  const r = fromSearch
    ? await send(P.PANEL_GET_CONVERSATION, { url: fromSearch })
    : await send(P.PANEL_GET_CONVERSATION, { tabId: await tabId() });
  const why = {
    unsupported: 'This page cannot be remembered (only http and https pages can).',
    'memory-off': 'Page memory is off: turn it on to read the conversation of this page.',
    off: `Wherefrom is off on ${r.tab && r.tab.host}: this tab is not read.`,
    'not-connected': 'Not connected — pair with the server in Settings.',
  }[/** @type {string} */ (r.status)];
  if (why || !r.ok) {
    head.replaceChildren(el('p', { class: r.ok ? 'muted' : 'muted bad', text: why || r.message || 'Could not load the conversation.' }));
    return;
  }
  const c = r.conversation;
  if (!c.turns.length) {
    head.replaceChildren(
      el('h2', { class: 'conv-title', text: 'No conversation captured here' }),
      el('p', { class: 'muted', text: `Nothing is stored for ${c.url}. Conversations are captured on the chat sites you allow, as you read them.` }),
    );
    return;
  }
  shown = c;
  file = fetchFile(c.url);
  file.catch(() => {});  // reported when the person copies or saves
  const when = c.captured || '';
  head.replaceChildren(
    el('h2', { class: 'conv-title', text: c.title || c.url }),
    el('div', { class: 'meta' }, [
      el('span', { class: 'kind', text: c.site || c.source_host || '' }),
      el('span', { text: `${c.turns.length} turn${c.turns.length === 1 ? '' : 's'}` }),
      when ? el('span', {}, [document.createTextNode('captured '), el('time', { text: c.age ? c.age.label : when, attrs: { datetime: when, title: new Date(when).toLocaleString() } })]) : null,
    ]),
    webUrl(c.url) ? el('a', { class: 'source', text: c.url, attrs: { href: c.url, target: '_blank', rel: 'noreferrer' } }) : el('span', { text: c.url }),
  );
  $('conv-actions').hidden = false;
  list.replaceChildren(...c.turns.map((/** @type {any} */ t, /** @type {number} */ i) => {
    const who = el('div', { class: 'who', text: t.role === 'user' ? 'You' : t.role === 'assistant' ? 'Assistant' : t.role });
    const attrs = { 'data-role': t.role, 'data-index': String(i), 'data-versions': String(t.versions || 1) };
    if (!(t.versions > 1)) return el('li', { class: `turn turn-${t.role}`, attrs }, [who, renderTurn(t)]);
    const { bar, body } = versionControl(t);
    return el('li', { class: `turn turn-${t.role}`, attrs }, [el('div', { class: 'turn-head' }, [who, bar]), body]);
  }));
}

/** Wire the buttons (once, at start). */
export function initConversation() {
  $('conv-back').addEventListener('click', () => {
    ui.conversation = null;
    hooks.showView('search');
  });
  $('conv-copy').addEventListener('click', async () => {
    if (!shown || !file) return;
    let md;
    try {
      md = await file;
    } catch (err) {
      say(/** @type {Error} */ (err).message, 'bad');
      return;
    }
    try {
      await navigator.clipboard.writeText(md.markdown);
      say('Copied as Markdown.', 'ok');
    } catch {
      say('Could not copy (the browser refused the clipboard).', 'bad');
    }
  });
  $('conv-save').addEventListener('click', async () => {
    if (!shown || !file) return;
    let md;
    try {
      md = await file;
    } catch (err) {
      say(/** @type {Error} */ (err).message, 'bad');
      return;
    }
    const blob = new Blob([md.markdown], { type: 'text/markdown;charset=utf-8' });
    const href = URL.createObjectURL(blob);
    const a = el('a', { attrs: { href, download: md.fileName } });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(href), 60_000);
    say(`Saved ${md.fileName}.`, 'ok');
  });
}
