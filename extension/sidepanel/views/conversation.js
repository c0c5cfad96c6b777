// Conversation view: the whole captured conversation of the current chat page, or of one opened
// from Search (ui.conversation.url), in order, with its URL, site and capture time; copy it as
// Markdown, or save it as a .md file with front matter (a Blob and a download link: no
// permission needed).
//
// A turn renders as Markdown (markdown.js: marked + DOMPurify) when the server gives its Markdown
// (`markdown`); a turn stored before Markdown was kept renders as its plain text. renderTurn is
// the one place that decides.

import { $, el, webUrl } from '../dom.js';
import { P, hooks, send, tabId, ui } from '../state.js';
import { conversationMarkdown, fileName, isoTime } from '../export-md.js';
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
  const when = isoTime(c.captured_at);
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
  list.replaceChildren(...c.turns.map((/** @type {any} */ t, /** @type {number} */ i) =>
    el('li', { class: `turn turn-${t.role}`, attrs: { 'data-role': t.role, 'data-index': String(i) } }, [
      el('div', { class: 'who', text: t.role === 'user' ? 'You' : t.role === 'assistant' ? 'Assistant' : t.role }),
      renderTurn(t),
    ])));
}

/** Wire the buttons (once, at start). */
export function initConversation() {
  $('conv-back').addEventListener('click', () => {
    ui.conversation = null;
    hooks.showView('search');
  });
  $('conv-copy').addEventListener('click', async () => {
    if (!shown) return;
    try {
      await navigator.clipboard.writeText(conversationMarkdown(shown));
      say('Copied as Markdown.', 'ok');
    } catch {
      say('Could not copy (the browser refused the clipboard).', 'bad');
    }
  });
  $('conv-save').addEventListener('click', () => {
    if (!shown) return;
    const blob = new Blob([conversationMarkdown(shown)], { type: 'text/markdown;charset=utf-8' });
    const href = URL.createObjectURL(blob);
    const a = el('a', { attrs: { href, download: fileName(shown) } });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(href), 60_000);
    say(`Saved ${fileName(shown)}.`, 'ok');
  });
}
