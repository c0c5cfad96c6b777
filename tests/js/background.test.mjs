// The service worker against a fake chrome and a fake server: listeners registered synchronously,
// governance before any request, the probe cache, captures taking url/title from sender.tab, the
// outbox and its idempotency key, content-script registration only for `collect` chat hosts.
import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { makeChrome, makeFetch } from './fake-chrome.mjs';

const chrome = makeChrome();
globalThis.chrome = /** @type {any} */ (chrome);

// a server the tests steer
const sens = JSON.parse(readFileSync(new URL('../../server/governance/sensitive.json', import.meta.url), 'utf8'));
const srv = {
  up: true,
  token: 'T0KEN',
  rules: /** @type {{host: string, mode: string}[]} */ ([]),
  stored: /** @type {Map<string, any>} */ (new Map()),
  green: false,
  /** @type {Promise<void> | null} the next /api/policy answer waits for this */
  hold: null,
};
const policyBody = () => ({
  version: 'v' + JSON.stringify(srv.rules).length,
  global_default: 'collect',
  rules: srv.rules,
  sensitive: { domains: sens.domains, suffixes: sens.suffixes, labels: sens.labels, exact: sens.exact },
});
const { fetch, calls } = makeFetch(async (method, url, init) => {
  if (!srv.up) throw new TypeError('Failed to fetch');
  if (url.pathname === '/api/health') return { body: { ok: true } };
  if (init.headers.Authorization !== `Bearer ${srv.token}`) return { status: 401, body: { error: { code: 'unauthorized', message: 'no' } } };
  if (url.pathname === '/api/policy') {
    const body = policyBody(); // the answer as of when the request arrived
    if (srv.hold) {
      const held = srv.hold;
      srv.hold = null;
      await held; // a slow answer
    }
    return { body };
  }
  if (url.pathname === '/api/page-probe') return { body: { mode: 'collect', green: srv.green, exact: srv.green ? 1 : 0, documents: 0 } };
  if (method === 'POST') {
    const key = init.headers['Idempotency-Key'];
    if (key && !srv.stored.has(key)) srv.stored.set(key, { path: url.pathname, body: JSON.parse(init.body) });
    return { status: 201, body: { id: 1 } };
  }
  return { status: 404, body: { error: { code: 'not_found', message: 'no' } } };
});
globalThis.fetch = /** @type {any} */ (fetch);

// just enough canvas for the icon: the artwork is one brand-coloured pixel and one white pixel
/** @type {Uint8ClampedArray[]} */
const drawn = [];
globalThis.createImageBitmap = /** @type {any} */ (async () => ({}));
globalThis.OffscreenCanvas = /** @type {any} */ (class {
  getContext() {
    return {
      drawImage() {},
      getImageData() {
        const data = new Uint8ClampedArray([64, 88, 214, 255, 255, 255, 255, 255]);
        drawn.push(data);
        return { data };
      },
    };
  }
});

const before = Object.keys(chrome.listeners).length;
await import('../../extension/background/main.js');
const P = /** @type {any} */ (globalThis).WherefromProtocol;
const { flush } = await import('../../extension/background/outbox.js');
const { gate } = await import('../../extension/background/actions.js');
const { wantedScripts, refreshPolicy } = await import('../../extension/background/governance.js');
const { recolour } = await import('../../extension/background/icon.js');

const fire = (/** @type {string} */ name, /** @type {any[]} */ ...args) => Promise.all(chrome.listeners[name].map((fn) => fn(...args)));
/** @param {any} message @param {any} sender */
const message = (message, sender) =>
  new Promise((res) => chrome.listeners['runtime.onMessage'][0](message, sender, res));
const PANEL = { id: chrome.runtime.id, url: chrome.runtime.getURL('sidepanel/index.html') };
const serverCalls = () => calls.filter((c) => !c.url.startsWith('chrome-extension:'));

beforeEach(async () => {
  await chrome.storage.local.clear();
  await chrome.storage.session.clear();
  calls.length = 0;
  drawn.length = 0;
  srv.up = true;
  srv.rules = [];
  srv.stored.clear();
  srv.green = false;
  srv.hold = null;
  for (const k of Object.keys(chrome.tabsById)) delete chrome.tabsById[Number(k)];
});

test('every listener is registered synchronously at top level', () => {
  assert.equal(before, 0);
  for (const name of ['runtime.onInstalled', 'runtime.onStartup', 'runtime.onMessage', 'tabs.onActivated', 'tabs.onUpdated',
    'contextMenus.onClicked', 'commands.onCommand', 'storage.onChanged', 'alarms.onAlarm']) {
    assert.equal(chrome.listeners[name]?.length, 1, name);
  }
});

test('page memory off (the default): a tab activation sends nothing at all', async () => {
  await chrome.storage.local.set({ token: 'T0KEN' });
  chrome.tabsById[1] = { id: 1, url: 'https://example.com/a', title: 'A', active: true, windowId: 1 };
  await fire('tabs.onActivated', { tabId: 1 });
  await fire('tabs.onUpdated', 1, { status: 'complete' }, chrome.tabsById[1]);
  assert.deepEqual(serverCalls(), []);
});

test('a site resolved off locally is never probed; its URL never leaves', async () => {
  srv.rules = [{ host: 'example.com', mode: 'off' }];
  await chrome.storage.local.set({ token: 'T0KEN', pageMemory: true, disclosureAccepted: true });
  chrome.tabsById[2] = { id: 2, url: 'https://www.example.com/secret?q=1', title: 'Secret', active: true, windowId: 1 };
  await fire('tabs.onActivated', { tabId: 2 });
  const sent = serverCalls();
  assert.ok(sent.every((c) => c.url.endsWith('/api/policy')), JSON.stringify(sent));
  assert.ok(!JSON.stringify(sent).includes('example.com'));
  // the icon was redrawn in the muted look: the brand pixel turned grey
  const px = drawn.at(-1);
  assert.ok(px && px[0] === px[1] && px[1] === px[2], 'greyed');
});

test('a sensitive host is off without any rule', async () => {
  await chrome.storage.local.set({ token: 'T0KEN', pageMemory: true, disclosureAccepted: true, policy: policyBody() });
  chrome.tabsById[3] = { id: 3, url: 'https://secure.chase.com/login', title: 'Bank', active: true, windowId: 1 };
  await fire('tabs.onActivated', { tabId: 3 });
  assert.deepEqual(serverCalls(), []);
});

test('collect: probed once, cached 30 s, icon green when the probe says so', async () => {
  srv.green = true;
  await chrome.storage.local.set({ token: 'T0KEN', pageMemory: true, disclosureAccepted: true, policy: policyBody() });
  chrome.tabsById[4] = { id: 4, url: 'https://example.org/page#frag', title: 'P', active: true, windowId: 1 };
  await fire('tabs.onActivated', { tabId: 4 });
  await fire('tabs.onActivated', { tabId: 4 });
  const probes = serverCalls().filter((c) => c.url.includes('/api/page-probe'));
  assert.equal(probes.length, 1);
  assert.equal(new URL(probes[0].url).searchParams.get('url'), 'https://example.org/page');
  const px = drawn.at(-1);
  assert.ok(px && px[1] > px[0] && px[1] > px[2], 'green');
  assert.deepEqual([...px.slice(4)], [255, 255, 255, 255], 'whites kept');
});

test('captures: url and title come from sender.tab; a content script cannot reach panel types', async () => {
  await chrome.storage.local.set({ token: 'T0KEN', pageMemory: true, disclosureAccepted: true, policy: policyBody() });
  const sender = { id: chrome.runtime.id, url: 'https://chatgpt.com/c/1', tab: { id: 9, url: 'https://chatgpt.com/c/1', title: 'Chat' } };
  const refused = await message({ type: P.PANEL_SET_RULE, payload: { host: 'chase.com', mode: 'collect' } }, sender);
  assert.equal(refused.ok, false);
  const sneaky = await message({ type: P.CAPTURE_TURNS, payload: { site: 'chatgpt', turns: [{ role: 'user', text: 'hi' }], url: 'https://evil.example/' } }, sender);
  assert.equal(sneaky.ok, false);
  const pair = await message({ type: P.PANEL_PAIR, payload: { token: 'x' } }, sender);
  assert.equal(pair.ok, false);
  assert.deepEqual(serverCalls(), []);
});

test('a write while the server is down waits in the outbox and is delivered once with its key', async () => {
  await chrome.storage.local.set({ token: 'T0KEN', pageMemory: true, disclosureAccepted: true, policy: policyBody() });
  chrome.tabsById[5] = { id: 5, url: 'https://example.net/n', title: 'N', active: true, windowId: 1 };
  srv.up = false;
  const r = await message({ type: P.PANEL_SAVE_NOTE, payload: { tabId: 5, text: 'remember this' } }, PANEL);
  assert.equal(r.ok, true);
  assert.equal(r.queued, true);
  const { outbox } = await chrome.storage.local.get('outbox');
  assert.equal(outbox.length, 1);
  const key = outbox[0].key;
  assert.match(key, /^[0-9a-f-]{36}$/);
  const firstTry = calls.find((c) => c.method === 'POST');
  assert.equal(firstTry?.headers['Idempotency-Key'], key);
  srv.up = true;
  await Promise.all([flush(gate), flush(gate)]);
  await fire('tabs.onActivated', { tabId: 5 });
  const posts = serverCalls().filter((c) => c.method === 'POST' && c.url.endsWith('/api/notes'));
  assert.ok(posts.every((c) => c.headers['Idempotency-Key'] === key));
  assert.equal(srv.stored.size, 1);
  assert.equal(posts.length, 2, 'the failed first try and exactly one delivery');
  assert.deepEqual((await chrome.storage.local.get('outbox')).outbox, []);
});

test('saves waiting for a server that is down: the outbox alarm has the browser link start it, then delivers', async () => {
  await chrome.storage.local.set({ token: 'OLD', pageMemory: true, disclosureAccepted: true, policy: policyBody() });
  chrome.tabsById[6] = { id: 6, url: 'https://example.net/w', title: 'W', active: true, windowId: 1 };
  srv.up = false;
  await message({ type: P.PANEL_SAVE_NOTE, payload: { tabId: 6, text: 'wait for me' } }, PANEL);
  // no link installed: the alarm finds the server down and the save keeps waiting
  await fire('alarms.onAlarm', { name: 'wherefrom-outbox' });
  assert.equal((await chrome.storage.local.get('outbox')).outbox.length, 1);
  assert.equal(srv.stored.size, 0);
  // a link that starts the server: the same alarm now delivers
  /** @type {any} */ (chrome.runtime).sendNativeMessage = async (/** @type {string} */ _name, /** @type {any} */ msg) => {
    if (msg.type === 'start') srv.up = true;
    return { ok: true, running: srv.up, url: 'http://127.0.0.1:37711', token: srv.token, started: true };
  };
  try {
    await fire('alarms.onAlarm', { name: 'wherefrom-outbox' });
  } finally {
    delete (/** @type {any} */ (chrome.runtime).sendNativeMessage);
  }
  assert.equal(srv.stored.size, 1);
  assert.deepEqual((await chrome.storage.local.get('outbox')).outbox, []);
  assert.equal((await chrome.storage.local.get('token')).token, srv.token);
});

test('capture scripts only for chat hosts resolving to collect, only with page memory on', () => {
  const sites = [
    { id: 'chatgpt', hosts: ['chatgpt.com'], matches: ['https://chatgpt.com/*'] },
    { id: 'gemini', hosts: ['gemini.google.com'], matches: ['https://gemini.google.com/*'] },
    { id: 'huggingchat', hosts: ['huggingface.co'], matches: ['https://huggingface.co/chat/*'] },
  ];
  const pol = { ...policyBody(), rules: [{ host: 'google.com', mode: 'suggest' }] };
  assert.deepEqual([...wantedScripts(sites, pol, true).keys()], ['wf-site-chatgpt', 'wf-site-huggingchat']);
  assert.equal(wantedScripts(sites, pol, false).size, 0);
  assert.equal(wantedScripts(sites, null, true).size, 0);
});

test('recolour: green keeps whites, off greys everything', () => {
  const g = recolour(new Uint8ClampedArray([64, 88, 214, 255, 255, 255, 255, 255]), 'green');
  assert.ok(g[1] > g[0] && g[1] > g[2]);
  assert.deepEqual([...g.slice(4)], [255, 255, 255, 255]);
  const o = recolour(new Uint8ClampedArray([64, 88, 214, 255]), 'off');
  assert.ok(o[0] === o[1] && o[1] === o[2] && o[3] < 255);
});

test('a queued write for a site turned off since is never sent', async () => {
  await chrome.storage.local.set({ token: 'T0KEN', pageMemory: true, disclosureAccepted: true, policy: policyBody() });
  chrome.tabsById[5] = { id: 5, url: 'https://example.net/n', title: 'N', active: true, windowId: 1 };
  chrome.tabsById[6] = { id: 6, url: 'https://example.org/m', title: 'M', active: false, windowId: 1 };
  srv.up = false;
  await message({ type: P.PANEL_SAVE_NOTE, payload: { tabId: 5, text: 'secret about example.net' } }, PANEL);
  await message({ type: P.PANEL_SAVE_NOTE, payload: { tabId: 6, text: 'fine to send' } }, PANEL);
  assert.equal((await chrome.storage.local.get('outbox')).outbox.length, 2);
  srv.up = true;
  srv.rules = [{ host: 'example.net', mode: 'off' }];
  await chrome.storage.local.set({ policy: policyBody() });
  calls.length = 0;
  const res = await flush(gate);
  const posts = serverCalls().filter((c) => c.method === 'POST');
  // positive control: the other queued note is delivered, so the observer sees deliveries
  assert.equal(res.delivered, 1);
  assert.equal(posts.length, 1);
  assert.equal(posts[0].body.text, 'fine to send');
  assert.ok(!calls.some((c) => c.url.includes('example.net') || JSON.stringify(c.body || '').includes('example.net')));
  assert.deepEqual((await chrome.storage.local.get('outbox')).outbox, []);
  const { outboxDropped } = await chrome.storage.local.get('outboxDropped');
  assert.match(outboxDropped.at(-1).reason, /^not sent: /);
});

test('a capture is posted with the url and title of sender.tab', async () => {
  await chrome.storage.local.set({ token: 'T0KEN', pageMemory: true, disclosureAccepted: true, policy: policyBody() });
  const sender = { id: chrome.runtime.id, url: 'https://chatgpt.com/c/1', tab: { id: 9, url: 'https://chatgpt.com/c/1?utm_source=x#top', title: 'My chat' } };
  const r = await message({ type: P.CAPTURE_TURNS, payload: { site: 'chatgpt', turns: [{ role: 'user', text: 'hi' }], settled: true } }, sender);
  assert.equal(r.ok, true);
  const post = serverCalls().find((c) => c.method === 'POST' && c.url.endsWith('/api/captures'));
  assert.ok(post, 'the capture reached the server');
  const body = post.body;
  assert.equal(body.url, 'https://chatgpt.com/c/1');
  assert.equal(body.title, 'My chat');
  assert.deepEqual(body.turns, [{ role: 'user', text: 'hi' }]);
});

test("a turn's markdown is forwarded: link trackers dropped outside code, cut without an open fence", async () => {
  const limits = { markdown_chars: 80 };
  await chrome.storage.local.set({ token: 'T0KEN', pageMemory: true, disclosureAccepted: true, policy: { ...policyBody(), limits } });
  const sender = { id: chrome.runtime.id, url: 'https://chatgpt.com/c/1', tab: { id: 9, url: 'https://chatgpt.com/c/1', title: 'C' } };
  const markdown = 'See [a](https://a.example/?utm_source=chatgpt.com)\n\n```sh\ncurl "https://a.example/?utm_source=x"\necho done\n```';
  const r = await message({ type: P.CAPTURE_TURNS, payload: { site: 'chatgpt', turns: [{ role: 'assistant', text: 'See a', markdown }], settled: true } }, sender);
  assert.equal(r.ok, true);
  const body = serverCalls().find((c) => c.method === 'POST' && c.url.endsWith('/api/captures')).body;
  const md = body.turns[0].markdown;
  assert.ok(md.startsWith('See [a](https://a.example/)\n\n```sh\ncurl "https://a.example/?utm_source=x"'), md);
  assert.ok(Array.from(md).length <= 80 && md.endsWith('\n```'), md);
  // the protocol bounds it: a markdown that is not a string is refused before anything is sent
  const bad = await message({ type: P.CAPTURE_TURNS, payload: { site: 'chatgpt', turns: [{ role: 'assistant', text: 'x', markdown: 5 }] } }, sender);
  assert.equal(bad.ok, false);
});

test('insert into a composer only where the site may be looked at', async () => {
  srv.rules = [{ host: 'claude.ai', mode: 'off' }];
  await chrome.storage.local.set({ token: 'T0KEN', pageMemory: true, disclosureAccepted: true, policy: policyBody() });
  chrome.tabsById[7] = { id: 7, url: 'https://chatgpt.com/c/1', title: 'C', active: true, windowId: 1 };
  chrome.tabsById[8] = { id: 8, url: 'https://claude.ai/chat/2', title: 'D', active: false, windowId: 1 };
  chrome.tabs.sent.length = 0;
  const ok = await message({ type: P.PANEL_INSERT_TEXT, payload: { tabId: 7, text: 'a memory' } }, PANEL);
  assert.equal(ok.ok, true); // positive control: the message does reach a permitted tab
  const refused = await message({ type: P.PANEL_INSERT_TEXT, payload: { tabId: 8, text: 'a memory' } }, PANEL);
  assert.equal(refused.ok, false);
  assert.deepEqual(chrome.tabs.sent.map((m) => m.tabId), [7]);
});

test("what is sent is cut to the server's limits from the snapshot, never split", async () => {
  const limits = { turn_chars: 4, turns: 2, title_chars: 3, note_chars: 5 };
  await chrome.storage.local.set({ token: 'T0KEN', pageMemory: true, disclosureAccepted: true, policy: { ...policyBody(), limits } });
  const sender = { id: chrome.runtime.id, url: 'https://chatgpt.com/c/1', tab: { id: 9, url: 'https://chatgpt.com/c/1', title: 'A long title' } };
  const turns = [{ role: 'user', text: 'first' }, { role: 'assistant', text: 'ab🧪cdef' }, { role: 'user', text: 'xyz' }];
  const r = await message({ type: P.CAPTURE_TURNS, payload: { site: 'chatgpt', turns, settled: true } }, sender);
  assert.equal(r.ok, true);
  const body = serverCalls().find((c) => c.method === 'POST' && c.url.endsWith('/api/captures')).body;
  assert.equal(body.title, 'A l');
  assert.deepEqual(body.turns, [{ role: 'assistant', text: 'ab🧪c' }, { role: 'user', text: 'xyz' }]);
  chrome.tabsById[5] = { id: 5, url: 'https://example.net/n', title: 'Note page', active: true, windowId: 1 };
  await message({ type: P.PANEL_SAVE_NOTE, payload: { tabId: 5, text: '1234🧪678' } }, PANEL);
  const note = serverCalls().find((c) => c.method === 'POST' && c.url.endsWith('/api/notes')).body;
  assert.equal(note.text, '1234🧪');
});

test('"Save selection to memory" posts the selection with the tab\'s normalised URL and title', async () => {
  await chrome.storage.local.set({ token: 'T0KEN', pageMemory: true, disclosureAccepted: true, policy: policyBody() });
  const tab = { id: 3, url: 'HTTPS://Example.ORG:443/article/?utm_source=feed#part', title: 'An article', active: true, windowId: 1 };
  chrome.tabsById[3] = tab;
  await fire('contextMenus.onClicked', { menuItemId: 'wherefrom-save-selection', selectionText: '  a chosen sentence  ' }, tab);
  const post = serverCalls().find((c) => c.method === 'POST' && c.url.endsWith('/api/clips'));
  assert.ok(post, 'the clip reached the server');
  assert.deepEqual(post.body, { url: 'https://example.org/article', title: 'An article', text: 'a chosen sentence' });
  // the same click on a site that is off sends nothing
  srv.rules = [{ host: 'example.org', mode: 'off' }];
  await chrome.storage.local.set({ policy: policyBody() });
  calls.length = 0;
  await fire('contextMenus.onClicked', { menuItemId: 'wherefrom-save-selection', selectionText: 'secret' }, tab);
  assert.ok(!serverCalls().some((c) => c.method === 'POST'));
});

test('a policy fetched before a rule edit never overwrites the one fetched after it', async () => {
  await chrome.storage.local.set({ token: 'T0KEN', pageMemory: true, disclosureAccepted: true, policy: policyBody() });
  srv.rules = [{ host: 'example.org', mode: 'suggest' }]; // a first edit, not yet in the cache
  /** @type {() => void} */
  let release = () => {};
  srv.hold = new Promise((r) => { release = r; });
  const before = refreshPolicy({ force: true }); // its answer (suggest) is computed now, arrives late
  await new Promise((r) => setTimeout(r, 10));
  srv.rules = [{ host: 'example.org', mode: 'off' }]; // the second edit lands on the server
  const after = refreshPolicy({ force: true });
  setTimeout(release, 50); // the slow answer arrives after the fast one could have been stored
  await Promise.all([before, after]);
  const { policy } = await chrome.storage.local.get('policy');
  assert.deepEqual(policy.rules, [{ host: 'example.org', mode: 'off' }]);
});
