// Settings view: pairing (the browser link, else a pasted token), the page-memory switch, per-site rules and the sensitive defaults.

import { $, el } from '../dom.js';
import { P, hooks, send, ui } from '../state.js';

/** @type {() => Promise<void>} set by panel.js: connection check after pairing changes */
let reopen = async () => {};

export async function renderSettings() {
  const s = ui.state;
  const memory = /** @type {HTMLInputElement} */ ($('page-memory'));
  memory.checked = Boolean(s.pageMemory);
  $('memory-detail').textContent = s.disclosureAccepted
    ? (s.pageMemory ? 'On: tabs on sites that are not off are looked up on the local server.' : 'Off: nothing about your tabs leaves the browser.')
    : 'Off until you accept the disclosure.';
  $('unpair').hidden = !s.paired;
  renderLink(s);
  const pol = await send(P.PANEL_GET_POLICY);
  renderRules(pol.policy);
  renderSensitive(pol.policy);
}

/** The browser link's last answer, and pairing by hand when the link did not pair. @param {any} s */
function renderLink(s) {
  const link = s.link || null;
  const words = {
    absent: 'The browser link is not installed: run “wherefrom install-browser-link” once, and this panel finds the server (and starts it) by itself — or pair by hand below.',
    error: link ? link.message : '',
    ok: link ? link.message : '',
  };
  $('link-detail').textContent = link ? words[/** @type {'absent' | 'error' | 'ok'} */ (link.state)] || '' : s.disclosureAccepted ? '' : 'Once you accept the disclosure, the browser link (if installed) pairs this browser by itself.';
  // pasting is the fallback: shown open only while nothing else paired this browser
  if (!s.paired && !(link && link.state === 'ok')) /** @type {HTMLDetailsElement} */ ($('pair-by-hand')).open = true;
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
      await hooks.refreshAll();
    });
    list.append(el('li', { class: 'rule', attrs: { 'data-host': r.host } }, [
      el('div', {}, [el('div', { class: 'rule-host', text: r.host }), el('div', { class: 'hint', text: r.exact ? 'this host only (a public suffix: never the sites under it)' : 'this site and its subdomains' })]),
      select, remove,
    ]));
  }
}

/** @param {string} text @param {boolean} ok */
function ruleStatus(text, ok) {
  $('rule-status').textContent = text;
  $('rule-status').dataset.tone = ok ? 'ok' : 'bad';
}

/** @param {string} host @param {string} mode a <select>'s value: one of the three modes (the worker's validator refuses others) */
async function setRule(host, mode) {
  const res = await send(P.PANEL_SET_RULE, { host, mode: /** @type {WfPayloads['panel:set-rule']['mode']} */ (mode) });
  ruleStatus(res.ok ? `${res.rule.host} and its subdomains: ${res.rule.mode}.` : res.message, res.ok);
  await hooks.refreshAll();
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

/** Wire the view's controls (once, at start). @param {() => Promise<void>} opened */
export function initSettings(opened) {
  reopen = opened;
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
    await reopen();
  });

  $('unpair').addEventListener('click', async () => {
    await send(P.PANEL_UNPAIR);
    $('pair-status').textContent = 'The token was removed.';
    await reopen();
  });

  $('page-memory').addEventListener('change', async () => {
    const on = /** @type {HTMLInputElement} */ ($('page-memory')).checked;
    if (on && !ui.state.disclosureAccepted) {
      ui.disclosureDismissed = false;
      /** @type {HTMLInputElement} */ ($('page-memory')).checked = false;
      hooks.showView(ui.view);
      return;
    }
    await send(P.PANEL_SET_PAGE_MEMORY, { on });
    await hooks.refreshAll();
  });
}
