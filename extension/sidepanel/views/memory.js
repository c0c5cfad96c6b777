// Memory view: what is stored about the page in front of the person (four tiers), the note box,
// "Add this page to library" and "Forget this site" (dry run, a second click, undo).

import { $, el } from '../dom.js';
import { renderMarkdown } from '../markdown.js';
import { P, hooks, send, tabId, ui } from '../state.js';

// the server's confirmation lifetime (expires_in) less a margin for the round trip, so a click
// the panel still accepts is never answered "expired"
const FORGET_MARGIN_MS = 750;

const MODE_WORDS = /** @type {Record<string, string>} */ ({
  collect: 'collect — shown and saved',
  suggest: 'suggest — shown, nothing saved',
  off: 'off — this tab is never read',
});

/** @param {string} reason */
function reasonWords(reason) {
  if (!reason) return '';
  if (reason === 'default') return 'default for all sites';
  if (reason.startsWith('rule:')) return `your rule for ${reason.slice(5)}`;
  if (reason.startsWith('sensitive:')) {
    const [, cat, entry] = reason.split(':');
    return `sensitive (${cat}): ${entry}`;
  }
  return reason;
}

/** @param {any} tab */
function pageCard(tab) {
  const card = $('page');
  card.replaceChildren();
  if (!tab || !tab.supported) {
    card.append(el('p', { class: 'muted', text: 'This page cannot be remembered (only http and https pages can).' }));
    return;
  }
  card.append(
    el('div', { class: 'page-title', text: tab.title || tab.url }),
    el('div', { class: 'page-host' }, [
      el('span', { text: tab.host }),
      tab.mode ? el('span', { class: `mode mode-${tab.mode}`, text: tab.mode, attrs: { title: MODE_WORDS[tab.mode] || '' } }) : null,
    ]),
  );
  if (tab.reason && tab.reason !== 'no-policy') card.append(el('div', { class: 'hint', text: reasonWords(tab.reason) }));
  if (tab.chat && ui.state && ui.state.pageMemory) {
    const open = el('button', { class: 'small', text: 'Read the whole conversation', attrs: { type: 'button', id: 'open-conversation' } });
    open.addEventListener('click', () => {
      ui.conversation = null; // this tab's own
      hooks.showView('conversation');
    });
    card.append(el('div', { class: 'row' }, [open]));
  }
}

/**
 * One item of the server's match tiers (GET /match), or a saved document: the fields read here.
 * @typedef {{id?: number, kind?: string, role?: string, text?: string, markdown?: string,
 *   title?: string, source_ref?: string, source_url?: string, source_host?: string,
 *   age?: {label?: string, granularity?: string}, via?: string}} MemoryItem
 */

/** @param {MemoryItem} item @param {string} pageUrl */
function itemNode(item, pageUrl) {
  const text = item.text || item.title || item.source_ref || item.source_url || '';
  const kind = item.kind === 'turn' ? (item.role === 'user' ? 'you said' : 'assistant') : item.kind || '';
  const meta = el('div', { class: 'meta' }, [
    el('span', { class: 'kind', text: kind }),
    item.via ? el('span', { class: 'via', text: `via ${item.via}`, attrs: { title: 'written by an agent, not by you' } }) : null,
    item.source_host ? el('span', { text: item.source_host }) : null,
    item.age && item.age.label ? el('span', { class: 'age', text: item.age.label, attrs: { title: item.age.granularity === 'day' ? 'to the day' : '' } }) : null,
  ]);
  // a captured turn renders from its Markdown (sanitised, nothing from the page runs)
  const body = item.kind === 'turn' && typeof item.markdown === 'string' && item.markdown
    ? el('div', { class: 'text md' }, [renderMarkdown(item.markdown)])
    : el('div', { class: 'text', text });
  const li = el('li', { class: 'item' }, [body, meta]);
  const tab = ui.state && ui.state.tab;
  if (tab && tab.chat && item.text) {
    // on a chat site: put this memory into the composer (never sent by us); a turn goes in as its
    // Markdown, so lines and code indentation survive
    const insertText = item.kind === 'turn' && item.markdown ? item.markdown : item.text;
    const insert = el('button', { class: 'quiet small insert', text: 'Insert', attrs: { title: 'Insert into the chat box' } });
    insert.addEventListener('click', async () => {
      const r = await send(P.PANEL_INSERT_TEXT, { tabId: tab.id, text: insertText });
      insert.textContent = r && r.ok ? 'Inserted' : 'Not inserted';
      insert.title = (r && r.message) || '';
    });
    meta.append(insert);
  }
  if (item.source_url && item.source_url !== pageUrl && /^https?:\/\//.test(item.source_url)) {
    const a = el('a', { class: 'source', text: item.source_ref || item.source_url, attrs: { href: item.source_url, target: '_blank', rel: 'noreferrer' } });
    meta.append(a);
  }
  return li;
}

/** @param {any} page */
function renderTiers(page) {
  const box = $('tiers');
  box.replaceChildren();
  const tiers = page.match.tiers || {};
  const docs = [];
  const seen = new Set();
  for (const d of tiers.documents || []) {
    const key = d.id ?? d.source_url;
    if (seen.has(key)) continue; // each document once
    seen.add(key);
    docs.push(d);
  }
  /** @type {Array<[string, string, MemoryItem[]]>} */
  const sections = [
    ['exact', 'From this page', tiers.exact || []],
    ['site', `Elsewhere on ${page.tab.host}`, tiers.site || []],
    ['related', 'Related', tiers.related || []],
    ['documents', 'Saved documents', docs],
  ];
  let any = false;
  for (const [key, title, items] of sections) {
    if (!items.length) continue;
    any = true;
    box.append(
      el('div', { class: `card tier tier-${key}`, attrs: { 'data-tier': key } }, [
        el('h2', {}, [el('span', { text: title }), el('span', { class: 'count', text: String(items.length) })]),
        el('ul', { class: 'items' }, items.map((i) => itemNode(i, page.tab.url))),
      ]),
    );
  }
  if (!any) box.append(el('div', { class: 'card empty', text: 'Nothing stored about this page yet.' }));
}

function renderNotice(/** @type {any} */ tab) {
  const n = $('notice');
  const notice = tab && tab.notice;
  n.hidden = !notice;
  n.replaceChildren();
  if (!notice) return;
  n.className = `notice ${notice.ok ? (notice.queued ? 'warn' : 'ok') : 'bad'}`;
  const close = el('button', { class: 'quiet small', text: 'Dismiss' });
  close.addEventListener('click', async () => {
    await send(P.PANEL_CLEAR_NOTICE, { tabId: tab.id });
    await hooks.refreshAll();
  });
  n.append(el('span', { text: notice.message }), close);
}

export async function renderMemory() {
  const s = ui.state;
  pageCard(s.tab);
  renderNotice(s.tab);
  const tiers = $('tiers');
  $('note-box').hidden = true;
  $('page-actions').hidden = true;
  tiers.replaceChildren();
  if (!s.pageMemory) {
    const btn = el('button', { class: 'primary', text: s.disclosureAccepted ? 'Turn page memory on' : 'Review and turn on' });
    btn.addEventListener('click', async () => {
      if (s.disclosureAccepted) {
        await send(P.PANEL_SET_PAGE_MEMORY, { on: true });
      } else {
        ui.disclosureDismissed = false;
      }
      await hooks.refreshAll();
    });
    tiers.append(el('div', { class: 'card empty' }, [el('p', { text: 'Page memory is off: nothing about your tabs leaves the browser.' }), btn]));
    return;
  }
  const page = await send(P.PANEL_GET_PAGE, { tabId: await tabId() });
  if (page.status === 'unsupported' || page.status === 'memory-off') return;
  if (page.status === 'off') {
    tiers.append(el('div', { class: 'card empty off', text: `Wherefrom is off on ${page.tab.host}: this tab is not read and nothing is sent. Change it in Settings.` }));
    return;
  }
  if (page.status === 'not-connected') {
    tiers.append(el('div', { class: 'card empty', text: 'Not connected — pair with the server in Settings.' }));
    return;
  }
  if (page.status === 'error') {
    tiers.append(el('div', { class: 'card empty bad', text: page.message }));
  } else {
    renderTiers(page);
  }
  const collect = page.tab.mode === 'collect';
  $('note-box').hidden = false;
  $('page-actions').hidden = false;
  for (const id of ['save-note', 'note', 'add-page']) /** @type {HTMLButtonElement} */ ($(id)).disabled = !collect;
  $('note-status').textContent = collect ? '' : `${page.tab.host} is "${page.tab.mode}": nothing is saved from it.`;
  const forgetHost = page.tab.host.replace(/^www\./, '');
  $('forget').dataset.host = forgetHost;
  if (!ui.forget) $('forget').textContent = `Forget ${forgetHost}…`;
}

/** Wire the view's buttons (once, at start). */
export function initMemory() {
  $('save-note').addEventListener('click', async () => {
    const box = /** @type {HTMLTextAreaElement} */ ($('note'));
    const text = box.value.trim();
    if (!text) {
      $('note-status').textContent = 'Write something first.';
      return;
    }
    $('note-status').textContent = 'Saving…';
    const r = await send(P.PANEL_SAVE_NOTE, { tabId: await tabId(), text });
    $('note-status').textContent = r.message || (r.ok ? 'Saved.' : 'Not saved.');
    $('note-status').dataset.tone = r.ok ? (r.queued ? 'warn' : 'ok') : 'bad';
    if (r.ok) {
      box.value = '';
      await hooks.refreshAll();
      $('note-status').textContent = r.message;
    }
  });

  $('add-page').addEventListener('click', async () => {
    $('add-status').textContent = 'Reading the page…';
    const r = await send(P.PANEL_ADD_PAGE, { tabId: await tabId() });
    $('add-status').textContent = r.message;
    $('add-status').dataset.tone = r.ok ? (r.queued ? 'warn' : 'ok') : 'bad';
    if (r.ok) await renderMemory();
  });

  function resetForget() {
    if (ui.forget) clearInterval(ui.forget.timer);
    ui.forget = null;
    const btn = $('forget');
    btn.classList.remove('armed');
    btn.textContent = `Forget ${btn.dataset.host || 'this site'}…`;
  }

  $('forget').addEventListener('click', async () => {
    const host = $('forget').dataset.host;
    if (!host) return;
    const status = $('forget-status');
    if (ui.forget && ui.forget.host === host && Date.now() < ui.forget.until) {
      const confirm = ui.forget.confirm;
      resetForget();
      status.textContent = 'Forgetting…';
      const r = await send(P.PANEL_FORGET_APPLY, { host, confirm });
      if (!r.ok) {
        status.textContent = r.message;
        status.dataset.tone = 'bad';
        return;
      }
      ui.undoBatch = r.batch;
      status.textContent = `Forgot ${r.facts} item${r.facts === 1 ? '' : 's'} from ${host}.` +
        (r.documents ? ` ${r.documents} library document${r.documents === 1 ? '' : 's'} kept.` : '');
      status.dataset.tone = 'ok';
      $('undo').hidden = false;
      await renderMemory();
      return;
    }
    resetForget();
    status.textContent = 'Counting…';
    const r = await send(P.PANEL_FORGET_DRY_RUN, { host });
    if (!r.ok) {
      status.textContent = r.message;
      status.dataset.tone = 'bad';
      return;
    }
    const until = Date.now() + Number(r.expires_in) * 1000 - FORGET_MARGIN_MS;
    const btn = $('forget');
    btn.classList.add('armed');
    const tick = () => {
      const left = Math.ceil((until - Date.now()) / 1000);
      if (left <= 0) {
        resetForget();
        status.textContent = 'Not forgotten (the confirmation ran out).';
        status.dataset.tone = '';
        return;
      }
      btn.textContent = `Click again to forget (${left}s)`;
    };
    ui.forget = { host, confirm: r.confirm, until, timer: /** @type {any} */ (setInterval(tick, 250)) };
    tick();
    status.textContent = `${r.facts} item${r.facts === 1 ? '' : 's'} from ${host}${r.subdomains === false ? ' (this host only)' : ' and its subdomains'} would be forgotten` +
      (r.documents ? `; ${r.documents} library document${r.documents === 1 ? '' : 's'} from it stay in the library.` : '.');
    status.dataset.tone = 'warn';
  });

  $('undo').addEventListener('click', async () => {
    if (!ui.undoBatch) return;
    const r = await send(P.PANEL_FORGET_UNDO, { batch: ui.undoBatch });
    $('forget-status').textContent = r.ok ? `Restored ${r.restored} item${r.restored === 1 ? '' : 's'}.` : r.message;
    $('forget-status').dataset.tone = r.ok ? 'ok' : 'bad';
    if (r.ok) {
      ui.undoBatch = null;
      $('undo').hidden = true;
      await renderMemory();
    }
  });
}
