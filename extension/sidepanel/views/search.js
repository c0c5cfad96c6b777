// Search view: one query box over everything stored (notes, clips, chat turns, library documents).
// Results keep the server's ranking; chat turns of one conversation are grouped at the place of
// its best turn. Keyboard: ArrowDown from the box goes to the first result, ArrowUp/ArrowDown
// move between results (Home/End to the ends), Escape goes back to the box, Enter opens: the
// source page in a new tab, or the conversation view for a chat turn.

import { $, el, marked, webUrl } from '../dom.js';
import { P, hooks, send, ui } from '../state.js';

const DEBOUNCE_MS = 250;
const KIND_WORDS = /** @type {Record<string, string>} */ ({ note: 'note', clip: 'clip', document: 'library', turn: 'chat' });

/** @type {{q: string, results: any[] | null, close: boolean, judged: boolean, note: string, meaning: {building?: string, hint?: string}, message: string, seq: number, focus: string | null}} */
const state = { q: '', results: null, close: true, judged: true, note: '', meaning: {}, message: '', seq: 0, focus: null };
// why a result matched, as the server says (server/memory/ranking.py)
const WHY_WORDS = /** @type {Record<string, string>} */ ({ words: 'words', meaning: 'meaning', both: 'words + meaning' });
/** @type {number | undefined} */
let timer;

export async function renderSearch() {
  const input = /** @type {HTMLInputElement} */ ($('q'));
  if (input.value !== state.q && !timer) input.value = state.q;
  // a redraw (the panel re-renders when tabs change) keeps the focus where it was; coming back
  // from a conversation focuses the result that opened it; arriving from elsewhere, the box
  const active = /** @type {HTMLElement | null} */ (document.activeElement);
  const wasOn = active && active.closest('#results') ? active.dataset.key || null : null;
  const arriving = !active || active === document.body || Boolean(active.closest('nav'));
  draw();
  const key = state.focus || wasOn;
  state.focus = null;
  const back = key ? /** @type {HTMLElement | null} */ (document.querySelector(`#results button.result[data-key="${CSS.escape(key)}"]`)) : null;
  if (back) back.focus();
  else if (arriving || wasOn) input.focus();
}

/** Run the query now (Enter, or the pause after typing). */
async function runSearch() {
  clearTimeout(timer);
  timer = undefined;
  const q = /** @type {HTMLInputElement} */ ($('q')).value.trim();
  const seq = ++state.seq;
  if (!q) {
    Object.assign(state, { q: '', results: null, message: '' });
    draw();
    return;
  }
  $('search-status').textContent = 'Searching…';
  const r = await send(P.PANEL_SEARCH, { q });
  if (seq !== state.seq) return; // a newer query was typed meanwhile
  Object.assign(state, {
    q,
    results: r.ok ? r.results : null,
    close: r.ok ? r.close !== false : true,
    judged: r.ok ? r.judged !== false : true,
    note: r.ok && typeof r.note === 'string' ? r.note : '',
    meaning: r.ok && r.meaning && typeof r.meaning === 'object' ? r.meaning : {},
    message: r.ok ? '' : r.message || 'The search failed.',
  });
  draw();
}

function draw() {
  const status = $('search-status');
  const box = $('results');
  box.replaceChildren();
  status.dataset.tone = '';
  if (state.message) {
    status.textContent = state.message;
    status.dataset.tone = 'bad';
    return;
  }
  if (state.results === null) {
    status.textContent = '';
    box.append(el('p', { class: 'hint', text: 'Search everything you kept: notes, selections, captured chats and library pages. A whole sentence works too.' }));
    return;
  }
  if (!state.results.length) {
    status.textContent = `No results for “${state.q}”.`;
    box.append(el('div', { class: 'card empty', attrs: { 'data-empty': 'search' } }, [
      el('p', { text: `Nothing in your notes, clips, chats or library matches “${state.q}”.` }),
      el('p', { class: 'hint', text: 'Try fewer words, or other words for the same thing.' }),
      ...buildingHint(),
    ]));
    return;
  }
  const n = state.results.length;
  status.textContent = `${n} result${n === 1 ? '' : 's'} for “${state.q}”.`;
  if (!state.close) {
    // nothing matches well, or nothing could judge it: say so before the nearest items, never
    // present them as answers (the sentence is the server's: server/memory/ranking.py NOTE or
    // UNJUDGED, as the CLI and MCP show it)
    if (state.judged) status.textContent = `No close match for “${state.q}”.`;
    if (state.note) {
      box.append(el('p', { class: 'hint', attrs: { 'data-close': 'false', 'data-judged': String(state.judged) }, text: state.note }));
    }
  }
  box.append(...buildingHint());
  box.append(el('ul', { class: 'results', attrs: { 'aria-label': `Results for ${state.q}` } }, groups(state.results).map(groupNode)));
}

/**
 * While search by meaning is built, the server's sentence on which part and what that means
 * (server/meaning/building.py); nothing once it is built.
 * @returns {HTMLElement[]}
 */
function buildingHint() {
  const { hint, building } = state.meaning;
  return hint ? [el('p', { class: 'hint', attrs: { 'data-meaning-building': String(building || '') }, text: hint })] : [];
}

/**
 * Server order, with every chat turn of a conversation gathered at its first (best) place.
 * @param {any[]} results
 * @returns {{conversation: any | null, items: any[]}[]}
 */
export function groups(results) {
  /** @type {{conversation: any | null, items: any[]}[]} */
  const out = [];
  /** @type {Map<string, {conversation: any, items: any[]}>} */
  const byConversation = new Map();
  for (const r of results) {
    if (r.kind === 'turn' && r.conversation_id != null) {
      const key = String(r.conversation_id);
      const g = byConversation.get(key);
      if (g) {
        g.items.push(r);
        continue;
      }
      const fresh = { conversation: r, items: [r] };
      byConversation.set(key, fresh);
      out.push(fresh);
    } else {
      out.push({ conversation: null, items: [r] });
    }
  }
  return out;
}

/** @param {any} r */
function keyOf(r) {
  return `${r.kind}:${r.id}${r.chunk != null ? `:${r.chunk}` : ''}`;
}

/** @param {any} r */
function meta(r) {
  return el('span', { class: 'meta' }, [
    el('span', { class: 'kind', text: KIND_WORDS[r.kind] || r.kind }),
    r.via ? el('span', { class: 'via', text: `via ${r.via}`, attrs: { title: 'written by an agent, not by you' } }) : null,
    r.source_host ? el('span', { text: r.source_host }) : null,
    r.age && r.age.label ? el('span', { class: 'age', text: r.age.label, attrs: { title: r.age.granularity === 'day' ? 'to the day' : '' } }) : null,
    r.why ? el('span', { class: 'why', attrs: { 'data-why': r.why, title: `strength ${Number(r.strength || 0).toFixed(2)}` }, text: `by ${WHY_WORDS[r.why] || r.why}` }) : null,
  ]);
}

/** @param {{conversation: any | null, items: any[]}} g */
function groupNode(g) {
  if (!g.conversation) {
    const r = g.items[0];
    const title = r.title_marked || r.title || r.source_ref || r.source_url || '';
    const button = resultButton(r, [
      el('span', { class: 'r-title' }, [marked(title)]),
      el('span', { class: 'r-snippet' }, [marked(r.snippet || r.text || '')]),
      meta(r),
    ]);
    return el('li', { class: 'card result-card', attrs: { 'data-kind': r.kind } }, [button]);
  }
  const c = g.conversation;
  const title = c.title_marked || c.title || c.source_ref || c.source_url || 'Conversation';
  const titleId = `conv-${c.conversation_id}`;
  return el('li', { class: 'card result-card conversation', attrs: { 'data-kind': 'conversation', 'data-conversation': String(c.conversation_id) } }, [
    el('div', { class: 'r-title', attrs: { id: titleId } }, [marked(title)]),
    el('span', { class: 'meta' }, [
      el('span', { class: 'kind', text: 'chat' }),
      c.source_host ? el('span', { text: c.source_host }) : null,
      c.age && c.age.label ? el('span', { class: 'age', text: c.age.label }) : null,
      el('span', { text: `${g.items.length} matching turn${g.items.length === 1 ? '' : 's'}` }),
    ]),
    el('ul', { class: 'turn-hits', attrs: { 'aria-labelledby': titleId } }, g.items.map((r) => el('li', {}, [
      resultButton(r, [
        el('span', { class: 'who', text: r.role === 'user' ? 'You' : 'Assistant' }),
        el('span', { class: 'r-snippet' }, [marked(r.snippet || r.text || '')]),
      ]),
    ]))),
  ]);
}

/**
 * @param {any} r
 * @param {(Node | null)[]} children
 */
function resultButton(r, children) {
  const b = el('button', { class: 'result', attrs: { type: 'button', 'data-key': keyOf(r), 'data-kind': r.kind, title: r.kind === 'turn' ? 'Open the conversation' : `Open ${r.source_url || ''}` } }, children);
  b.addEventListener('click', () => openResult(r));
  return b;
}

/** @param {any} r */
async function openResult(r) {
  state.focus = keyOf(r);
  if (r.kind === 'turn') {
    ui.conversation = { url: r.source_url, from: 'search' };
    hooks.showView('conversation');
    return;
  }
  if (webUrl(r.source_url)) await chrome.tabs.create({ url: r.source_url, active: true });
}

/** @param {KeyboardEvent} ev */
function onResultsKey(ev) {
  const buttons = /** @type {HTMLElement[]} */ ([...document.querySelectorAll('#results button.result')]);
  const at = buttons.indexOf(/** @type {HTMLElement} */ (document.activeElement));
  if (at < 0) return;
  let next = null;
  if (ev.key === 'ArrowDown') next = buttons[Math.min(at + 1, buttons.length - 1)];
  else if (ev.key === 'ArrowUp') next = at === 0 ? $('q') : buttons[at - 1];
  else if (ev.key === 'Home') next = buttons[0];
  else if (ev.key === 'End') next = buttons[buttons.length - 1];
  else if (ev.key === 'Escape') next = $('q');
  if (!next) return;
  ev.preventDefault();
  next.focus();
}

/** Wire the box and the results list (once, at start). */
export function initSearch() {
  const input = /** @type {HTMLInputElement} */ ($('q'));
  $('search-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    runSearch();
  });
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = /** @type {any} */ (setTimeout(runSearch, DEBOUNCE_MS));
  });
  input.addEventListener('keydown', (ev) => {
    if (ev.key !== 'ArrowDown') return;
    const first = /** @type {HTMLElement | null} */ (document.querySelector('#results button.result'));
    if (!first) return;
    ev.preventDefault();
    first.focus();
  });
  $('results').addEventListener('keydown', onResultsKey);
}
