// Activity view: the outbox (saves waiting for the server), chat pages that could not be read,
// and the server's activity log.

import { $, el } from '../dom.js';
import { P, send, since } from '../state.js';

/** What each selector-miss kind (content/capture.js) means to the person. */
const MISS_TEXT = /** @type {Record<string, string>} */ ({
  no_turns: 'no conversation found',
  missing_role: 'only one side of the conversation was found',
  empty_turn: 'a message was found empty',
  lost_text: 'part of the conversation was not captured',
  short_of_site_count: 'fewer messages were captured than the page counts',
  generic_reader: 'read by the generic reader (no site layout matched)',
});

export async function renderActivity() {
  const a = await send(P.PANEL_GET_ACTIVITY);
  const outbox = $('outbox');
  outbox.replaceChildren(el('h2', {}, [el('span', { text: 'Waiting to be delivered' }), el('span', { class: 'count', text: String((a.outbox || []).length) })]));
  if (!a.outbox || !a.outbox.length) {
    outbox.append(el('p', { class: 'muted', text: 'Nothing waiting: every save reached the server.' }));
  } else {
    outbox.append(el('p', { class: 'hint', text: 'Saved while the server was not running. They are delivered once when it is back.' }));
    outbox.append(el('ul', { class: 'items' }, a.outbox.map((/** @type {any} */ i) =>
      el('li', { class: 'item pending' }, [el('div', { class: 'text', text: i.summary }), el('div', { class: 'meta' }, [el('span', { text: i.url }), el('span', { class: 'age', text: since(i.created) })])]))));
    const retry = el('button', { text: 'Deliver now' });
    retry.addEventListener('click', async () => {
      await send(P.PANEL_RETRY_OUTBOX);
      await renderActivity();
    });
    outbox.append(retry);
  }
  const misses = $('misses');
  misses.hidden = !(a.selectorMisses && a.selectorMisses.length);
  misses.replaceChildren(el('h2', { text: 'Chat pages that could not be read' }));
  misses.append(el('ul', { class: 'items' }, (a.selectorMisses || []).slice().reverse().map((/** @type {any} */ m) =>
    el('li', { class: 'item' }, [el('div', { class: 'text', text: `${m.site}: ${MISS_TEXT[m.kind] || MISS_TEXT.no_turns} on ${m.host || 'the page'}${m.path ? ` (${m.path})` : ''}` }), el('div', { class: 'meta' }, [el('span', { class: 'kind', text: m.kind || 'no_turns' }), el('span', { class: 'age', text: since(m.at) })])]))));
  const act = $('activity');
  act.replaceChildren(el('h2', { text: 'Recent activity' }));
  if (a.failure) {
    act.append(el('p', { class: 'muted', text: a.failure.message }));
  } else if (!a.server || !a.server.length) {
    act.append(el('p', { class: 'muted', text: 'Nothing yet.' }));
  } else {
    act.append(el('ul', { class: 'items' }, a.server.map((/** @type {any} */ r) =>
      el('li', { class: 'item' }, [
        el('div', { class: 'text', text: r.summary }),
        el('div', { class: 'meta' }, [el('span', { class: 'kind', text: r.kind }), r.source_host ? el('span', { text: r.source_host }) : null, el('span', { class: 'age', text: r.age ? r.age.label : '' })]),
      ]))));
  }
  for (const d of a.dropped || []) {
    act.append(el('p', { class: 'status', text: `Not delivered: ${d.summary} — ${d.reason}`, attrs: { 'data-tone': 'bad' } }));
  }
}
