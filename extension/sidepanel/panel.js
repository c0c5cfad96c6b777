// The side panel. Everything it does goes through messages to the background (the token is never
// held here beyond the pairing input). DOM is built with textContent only, never innerHTML.

const P = /** @type {any} */ (globalThis).WherefromProtocol;
// the server's confirmation lifetime (expires_in) less a margin for the round trip, so a click
// the panel still accepts is never answered "expired"
const FORGET_MARGIN_MS = 750;

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * @param {string} tag
 * @param {{class?: string, text?: string, attrs?: Record<string, string>}} [opts]
 * @param {(Node | string | null | false)[]} [children]
 */
function el(tag, opts = {}, children = []) {
  const node = document.createElement(tag);
  if (opts.class) node.className = opts.class;
  if (opts.text !== undefined) node.textContent = opts.text;
  for (const [k, v] of Object.entries(opts.attrs || {})) node.setAttribute(k, v);
  for (const c of children) if (c) node.append(c);
  return node;
}

/** @param {string} type @param {Record<string, unknown>} [payload] */
async function send(type, payload = {}) {
  try {
    const r = await chrome.runtime.sendMessage({ type, payload });
    // keep the connection pill honest between checks
    const kind = r && (r.kind || (r.failure && r.failure.kind));
    if (kind === 'down') showConnection({ state: 'down', message: 'Server not running' });
    else if (kind === 'unpaired') showConnection({ state: 'unpaired', message: 'Not paired' });
    return r;
  } catch (err) {
    return { ok: false, message: 'The extension is restarting; try again.' };
  }
}

// ---------------------------------------------------------------- which tab, which view

const params = new URLSearchParams(location.search);
/** The tab this panel is about: ?tabId=N (tests, or a panel opened as a tab), else the active tab. */
async function tabId() {
  const given = Number(params.get('tabId'));
  if (Number.isInteger(given) && given > 0) return given;
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  return tab ? tab.id : undefined;
}

const ui = {
  view: params.get('view') || 'memory',
  disclosureDismissed: false,
  /** @type {any} */ state: null,
  forget: /** @type {{host: string, confirm: string, until: number, timer: number} | null} */ (null),
  /** @type {string | null} */ undoBatch: null,
};

function showView(/** @type {string} */ name) {
  ui.view = name;
  for (const b of document.querySelectorAll('nav.tabs button')) {
    b.setAttribute('aria-selected', String(/** @type {HTMLElement} */ (b).dataset.view === name));
  }
  for (const v of document.querySelectorAll('section.view')) {
    /** @type {HTMLElement} */ (v).hidden = /** @type {HTMLElement} */ (v).dataset.view !== name;
  }
  render();
}

// ---------------------------------------------------------------- connection and state

/** @param {{state: string, message: string}} conn */
function showConnection(conn) {
  const pill = $('conn');
  pill.dataset.state = conn.state;
  pill.textContent = conn.state === 'connected' ? 'Connected' : conn.state === 'down' ? 'Server not running' : conn.state === 'unpaired' ? 'Not paired' : conn.message;
  const detail = {
    connected: 'Connected to the Wherefrom server.',
    down: 'Server not running — start it with “wherefrom serve”. Nothing is lost: saves wait in the outbox.',
    unpaired: 'Not paired — the server is running but does not know this browser yet. Paste the token below.',
  }[conn.state] || conn.message;
  $('conn-detail').textContent = detail;
}

async function loadState() {
  ui.state = await send(P.PANEL_GET_STATE, { tabId: await tabId() });
  return ui.state;
}

async function render() {
  const s = ui.state || (await loadState());
  $('disclosure').hidden = s.disclosureAccepted || ui.disclosureDismissed;
  document.body.classList.toggle('gated', !s.disclosureAccepted && !ui.disclosureDismissed);
  if (ui.view === 'memory') await renderMemory();
  if (ui.view === 'activity') await renderActivity();
  if (ui.view === 'settings') await renderSettings();
}

async function refreshAll() {
  await loadState();
  await render();
}

// ---------------------------------------------------------------- Memory

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
      tab.mode && tab.mode !== 'unknown' ? el('span', { class: `mode mode-${tab.mode}`, text: tab.mode, attrs: { title: MODE_WORDS[tab.mode] || '' } }) : null,
    ]),
    tab.reason && tab.reason !== 'no-policy' ? el('div', { class: 'hint', text: reasonWords(tab.reason) }) : null,
  );
}

/** @param {any} item @param {string} pageUrl */
function itemNode(item, pageUrl) {
  const text = item.text || item.title || item.source_ref || item.source_url || '';
  const kind = item.kind === 'turn' ? (item.role === 'user' ? 'you said' : 'assistant') : item.kind || '';
  const meta = el('div', { class: 'meta' }, [
    el('span', { class: 'kind', text: kind }),
    item.source_host ? el('span', { text: item.source_host }) : null,
    item.age && item.age.label ? el('span', { class: 'age', text: item.age.label, attrs: { title: item.age.granularity === 'day' ? 'to the day' : '' } }) : null,
  ]);
  const li = el('li', { class: 'item' }, [el('div', { class: 'text', text }), meta]);
  const tab = ui.state && ui.state.tab;
  if (tab && tab.chat && item.text) {
    // on a chat site: put this memory into the composer (never sent by us)
    const insert = el('button', { class: 'quiet small insert', text: 'Insert', attrs: { title: 'Insert into the chat box' } });
    insert.addEventListener('click', async () => {
      const r = await send(P.PANEL_INSERT_TEXT, { tabId: tab.id, text: item.text });
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
    await refreshAll();
  });
  n.append(el('span', { text: notice.message }), close);
}

async function renderMemory() {
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
      await refreshAll();
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

// ---------------------------------------------------------------- Memory actions

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
    await refreshAll();
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
  status.textContent = `${r.facts} item${r.facts === 1 ? '' : 's'} from ${host} and its subdomains would be forgotten` +
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

// ---------------------------------------------------------------- Activity

/** @param {number} ms */
function since(ms) {
  const s = Math.max(0, (Date.now() - ms) / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

async function renderActivity() {
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
  /** @type {Record<string, string>} what each selector-miss kind means to the person */
  const MISS_TEXT = {
    no_turns: 'no conversation found',
    missing_role: 'only one side of the conversation was found',
    empty_turn: 'a message was found empty',
  };
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

// ---------------------------------------------------------------- Settings

async function renderSettings() {
  const s = ui.state;
  const memory = /** @type {HTMLInputElement} */ ($('page-memory'));
  memory.checked = Boolean(s.pageMemory);
  $('memory-detail').textContent = s.disclosureAccepted
    ? (s.pageMemory ? 'On: tabs on sites that are not off are looked up on the local server.' : 'Off: nothing about your tabs leaves the browser.')
    : 'Off until you accept the disclosure.';
  $('unpair').hidden = !s.paired;
  const pol = await send(P.PANEL_GET_POLICY);
  renderRules(pol.policy);
  renderSensitive(pol.policy);
}

/** @param {any} policy */
function renderRules(policy) {
  const list = $('rules');
  list.replaceChildren();
  const rules = (policy && policy.rules) || [];
  const tab = ui.state.tab;
  if (tab && tab.supported && !(rules.some((/** @type {any} */ r) => r.host === tab.host))) {
    /** @type {HTMLInputElement} */ ($('rule-host')).placeholder = tab.host;
  }
  if (!policy) {
    list.append(el('li', { class: 'muted', text: 'Connect to the server to see and change site rules.' }));
    return;
  }
  if (!rules.length) list.append(el('li', { class: 'muted', text: 'No rules yet: every site uses the default (collect), sensitive sites start off.' }));
  for (const r of rules) {
    const select = /** @type {HTMLSelectElement} */ (el('select', { attrs: { 'aria-label': `Mode for ${r.host}` } }, ['off', 'suggest', 'collect'].map((m) => el('option', { text: m, attrs: { value: m } }))));
    select.value = r.mode;
    select.addEventListener('change', async () => setRule(r.host, select.value));
    const remove = el('button', { class: 'quiet small', text: 'Remove', attrs: { 'aria-label': `Remove the rule for ${r.host}` } });
    remove.addEventListener('click', async () => {
      const res = await send(P.PANEL_DELETE_RULE, { host: r.host });
      ruleStatus(res.ok ? `Removed the rule for ${r.host}.` : res.message, res.ok);
      await refreshAll();
    });
    list.append(el('li', { class: 'rule', attrs: { 'data-host': r.host } }, [
      el('div', {}, [el('div', { class: 'rule-host', text: r.host }), el('div', { class: 'hint', text: 'this site and its subdomains' })]),
      select, remove,
    ]));
  }
}

/** @param {string} text @param {boolean} ok */
function ruleStatus(text, ok) {
  $('rule-status').textContent = text;
  $('rule-status').dataset.tone = ok ? 'ok' : 'bad';
}

/** @param {string} host @param {string} mode */
async function setRule(host, mode) {
  const res = await send(P.PANEL_SET_RULE, { host, mode });
  ruleStatus(res.ok ? `${res.rule.host} and its subdomains: ${res.rule.mode}.` : res.message, res.ok);
  await refreshAll();
}

/** @param {any} policy */
function renderSensitive(policy) {
  const box = $('sensitive');
  box.replaceChildren();
  if (!policy || !policy.sensitive) {
    box.append(el('p', { class: 'muted', text: 'Shown once connected to the server.' }));
    return;
  }
  const sens = policy.sensitive;
  /** @type {Map<string, string[]>} */
  const byCat = new Map();
  const add = (/** @type {string} */ cat, /** @type {string} */ what) => {
    if (!byCat.has(cat)) byCat.set(cat, []);
    /** @type {string[]} */ (byCat.get(cat)).push(what);
  };
  for (const [h, c] of Object.entries(sens.domains || {})) add(String(c), h);
  for (const [h, c] of Object.entries(sens.suffixes || {})) add(String(c), `any site under .${h}`);
  for (const [h, c] of Object.entries(sens.labels || {})) add(String(c), `${h}.* — any address that starts with “${h}.”`);
  for (const [h, c] of Object.entries(sens.exact || {})) add(String(c), h);
  add('local', 'private and loopback addresses (this machine, your network)');
  const words = /** @type {Record<string, string>} */ ({
    bank: 'Banks, insurers, brokers, payment providers',
    health: 'Health portals and pharmacies',
    government: 'Tax authorities and government services',
    identity: 'Sign-in and identity pages',
    local: 'This machine and private networks',
  });
  for (const [cat, entries] of byCat) {
    const details = el('details', { class: 'sensitive' }, [
      el('summary', {}, [el('span', { text: words[cat] || cat }), el('span', { class: 'count', text: String(entries.length) })]),
      el('ul', { class: 'plain' }, entries.sort().map((e) => el('li', { text: e }))),
    ]);
    box.append(details);
  }
}

$('rule-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const input = /** @type {HTMLInputElement} */ ($('rule-host'));
  const host = input.value.trim() || input.placeholder;
  if (!host || host === 'example.com') {
    ruleStatus('Type a site such as example.com.', false);
    return;
  }
  await setRule(host, /** @type {HTMLSelectElement} */ ($('rule-mode')).value);
  input.value = '';
});

$('pair').addEventListener('click', async () => {
  const input = /** @type {HTMLInputElement} */ ($('token'));
  const token = input.value.trim();
  if (!token) {
    $('pair-status').textContent = 'Paste the token first.';
    return;
  }
  $('pair-status').textContent = 'Checking…';
  const r = await send(P.PANEL_PAIR, { token });
  input.value = '';
  $('pair-status').textContent = r.message;
  $('pair-status').dataset.tone = r.ok ? 'ok' : 'bad';
  await opened();
});

$('unpair').addEventListener('click', async () => {
  await send(P.PANEL_UNPAIR);
  $('pair-status').textContent = 'The token was removed.';
  await opened();
});

$('page-memory').addEventListener('change', async () => {
  const on = /** @type {HTMLInputElement} */ ($('page-memory')).checked;
  if (on && !ui.state.disclosureAccepted) {
    ui.disclosureDismissed = false;
    /** @type {HTMLInputElement} */ ($('page-memory')).checked = false;
    await render();
    return;
  }
  await send(P.PANEL_SET_PAGE_MEMORY, { on });
  await refreshAll();
});

// ---------------------------------------------------------------- disclosure, start

$('accept').addEventListener('click', async () => {
  await send(P.PANEL_ACCEPT_DISCLOSURE);
  await refreshAll();
});

$('not-now').addEventListener('click', async () => {
  ui.disclosureDismissed = true;
  await render();
});

for (const b of document.querySelectorAll('nav.tabs button')) {
  b.addEventListener('click', () => showView(/** @type {string} */ (/** @type {HTMLElement} */ (b).dataset.view)));
}

/** Panel opened (or pairing changed): connection check, policy version check, outbox delivery. */
async function opened() {
  const r = await send(P.PANEL_OPENED);
  if (r && r.connection) showConnection(r.connection);
  await refreshAll();
}

chrome.tabs.onActivated.addListener(() => {
  if (!params.get('tabId')) refreshAll();
});
chrome.tabs.onUpdated.addListener(async (id, change) => {
  if ((change.url || change.status === 'complete') && id === (await tabId())) refreshAll();
});

showView(ui.view);
opened();
