// Memory view: what is stored about the page in front of the person (four tiers), the note box,
// "Add this page to library" and "Forget this site" (dry run naming the site's saved library
// pages with the choice to forget them too or keep them, a second click, undo).

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

/** Which render is the newest: an older answer arriving late never paints over a newer one. */
let renderSeq = 0;

export async function renderMemory() {
  const s = ui.state;
  const seq = ++renderSeq;
  // ask first, then change the view in one go: a re-render (a capture arriving, a tab update)
  // never hides the note box while the answer is on its way, so the person's text, the caret
  // and the focus stay where they are
  const page = s.pageMemory ? await send(P.PANEL_GET_PAGE, { tabId: await tabId() }) : null;
  if (seq !== renderSeq) return;
  pageCard(s.tab);
  renderNotice(s.tab);
  const tiers = $('tiers');
  const usable = page !== null && !['unsupported', 'memory-off', 'off', 'not-connected'].includes(page.status);
  $('note-box').hidden = !usable;
  $('page-actions').hidden = !usable;
  if (!page) {
    const btn = el('button', { class: 'primary', text: s.disclosureAccepted ? 'Turn page memory on' : 'Review and turn on' });
    btn.addEventListener('click', async () => {
      if (s.disclosureAccepted) {
        await send(P.PANEL_SET_PAGE_MEMORY, { on: true });
      } else {
        ui.disclosureDismissed = false;
      }
      await hooks.refreshAll();
    });
    tiers.replaceChildren(el('div', { class: 'card empty' }, [el('p', { text: 'Page memory is off: nothing about your tabs leaves the browser.' }), btn]));
    return;
  }
  if (page.status === 'unsupported' || page.status === 'memory-off') {
    tiers.replaceChildren();
    return;
  }
  if (page.status === 'off') {
    tiers.replaceChildren(el('div', { class: 'card empty off', text: `Wherefrom is off on ${page.tab.host}: this tab is not read and nothing is sent. Change it in Settings.` }));
    return;
  }
  if (page.status === 'not-connected') {
    tiers.replaceChildren(el('div', { class: 'card empty', text: 'Not connected — pair with the server in Settings.' }));
    return;
  }
  if (page.status === 'error') {
    tiers.replaceChildren(el('div', { class: 'card empty bad', text: page.message }));
  } else {
    renderTiers(page);
  }
  const collect = page.tab.mode === 'collect';
  for (const id of ['save-note', 'note', 'add-page']) /** @type {HTMLButtonElement} */ ($(id)).disabled = !collect;
  if (!collect) $('note-status').textContent = `${page.tab.host} is "${page.tab.mode}": nothing is saved from it.`;
  else if ($('note-status').dataset.mode === 'refused') $('note-status').textContent = '';
  $('note-status').dataset.mode = collect ? 'collect' : 'refused';
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
    $('forget-pages').hidden = true;
    $('forget-pages').replaceChildren();
  }

  /**
   * The dry run's saved pages, named, and the choice for them (kept unless the person ticks the box).
   * @param {number} count @param {{id: number, title: string, url: string}[]} pages
   */
  function showPages(count, pages) {
    const box = $('forget-pages');
    const plural = count === 1 ? '' : 's';
    const list = el('ul', { class: 'forget-page-list' }, pages.map((d) =>
      el('li', {}, [el('span', { class: 'page-title', text: d.title || d.url }), el('span', { class: 'page-host', text: d.url })])));
    if (count > pages.length) list.append(el('li', { class: 'muted', text: `and ${count - pages.length} more` }));
    const tick = el('input', { attrs: { type: 'checkbox', id: 'forget-documents' } });
    box.replaceChildren(
      el('div', { class: 'label', text: `${count} saved library page${plural} from this site` }),
      list,
      el('label', { class: 'forget-choice', attrs: { for: 'forget-documents' } }, [
        tick, el('span', { text: `Forget ${count === 1 ? 'this page' : `these ${count} pages`} too (otherwise ${count === 1 ? 'it stays' : 'they stay'} in the library)` }),
      ]),
    );
    box.hidden = false;
  }

  $('forget').addEventListener('click', async () => {
    const host = $('forget').dataset.host;
    if (!host) return;
    const status = $('forget-status');
    if (ui.forget && ui.forget.host === host && Date.now() < ui.forget.until) {
      const confirm = ui.forget.confirm;
      const box = /** @type {HTMLInputElement | null} */ (document.getElementById('forget-documents'));
      const choice = ui.forget.documents ? { documents: box && box.checked ? 'forget' : 'keep' } : {};
      resetForget();
      status.textContent = 'Forgetting…';
      const r = await send(P.PANEL_FORGET_APPLY, { host, confirm, ...choice });
      if (!r.ok) {
        status.textContent = r.message;
        status.dataset.tone = 'bad';
        return;
      }
      ui.undoBatch = r.batch;
      const gone = Number(r.documents_forgotten || 0);
      const kept = Number(r.documents_kept || 0);
      status.textContent = `Forgot ${r.facts} item${r.facts === 1 ? '' : 's'} from ${host}.` +
        (gone ? ` ${gone} saved page${gone === 1 ? '' : 's'} forgotten too.` : '') +
        (kept ? ` ${kept} saved page${kept === 1 ? '' : 's'} kept in the library.` : '');
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
    const documents = Number(r.documents || 0);
    ui.forget = { host, confirm: r.confirm, until, documents, timer: /** @type {any} */ (setInterval(tick, 250)) };
    tick();
    status.textContent = `${r.facts} item${r.facts === 1 ? '' : 's'} from ${host}${r.subdomains === false ? ' (this host only)' : ' and its subdomains'} would be forgotten.`;
    status.dataset.tone = 'warn';
    if (documents) showPages(documents, Array.isArray(r.pages) ? r.pages : []);
  });

  $('undo').addEventListener('click', async () => {
    if (!ui.undoBatch) return;
    const r = await send(P.PANEL_FORGET_UNDO, { batch: ui.undoBatch });
    const pages = r.ok && r.documents ? ` and ${r.documents} saved page${r.documents === 1 ? '' : 's'}` : '';
    $('forget-status').textContent = r.ok ? `Restored ${r.restored} item${r.restored === 1 ? '' : 's'}${pages}.` : r.message;
    $('forget-status').dataset.tone = r.ok ? 'ok' : 'bad';
    if (r.ok) {
      ui.undoBatch = null;
      $('undo').hidden = true;
      await renderMemory();
    }
  });
}
