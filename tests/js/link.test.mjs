// The browser link in the worker (background/link.js) against a fake chrome whose native host the
// test steers: nothing is asked before the disclosure, what a host answers is stored only when it
// is a loopback http origin with a token, and "starting" is shown exactly while a start runs.
import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { makeChrome } from './fake-chrome.mjs';

const chrome = /** @type {any} */ (makeChrome());
globalThis.chrome = chrome;
const host = {
  /** @type {any} */ reply: null,
  /** @type {string | null} */ fails: null,
  /** @type {any[]} */ asked: [],
  /** @type {any} */ startingSeen: undefined,
};
chrome.runtime.sendNativeMessage = async (/** @type {string} */ name, /** @type {any} */ message) => {
  host.asked.push({ name, message });
  host.startingSeen = (await chrome.storage.session.get('serverStarting')).serverStarting;
  if (host.fails) throw new Error(host.fails);
  return host.reply;
};
const { linkUp, HOST_NAME } = await import('../../extension/background/link.js');

beforeEach(async () => {
  await chrome.storage.local.clear();
  await chrome.storage.session.clear();
  host.asked = [];
  host.fails = null;
  host.startingSeen = undefined;
  host.reply = { ok: true, running: true, url: 'http://127.0.0.1:40001', token: 'TOKEN-FROM-HOST', started: true };
});

test('before the disclosure the host is never asked and nothing is stored', async () => {
  const r = await linkUp('start');
  assert.equal(r.ok, false);
  assert.deepEqual(host.asked, []);
  assert.deepEqual(chrome.storage.local.data, {});
  // positive control: once accepted, the same call asks and stores
  await chrome.storage.local.set({ disclosureAccepted: true });
  assert.equal((await linkUp('start')).ok, true);
  assert.deepEqual(host.asked, [{ name: HOST_NAME, message: { type: 'start' } }]);
  assert.equal(chrome.storage.local.data.token, 'TOKEN-FROM-HOST');
  assert.equal(chrome.storage.local.data.serverUrl, 'http://127.0.0.1:40001');
});

test('"starting" is in session storage while a start runs, and gone after', async () => {
  await chrome.storage.local.set({ disclosureAccepted: true });
  await linkUp('start');
  assert.ok(host.startingSeen && typeof host.startingSeen.at === 'number');
  assert.equal(chrome.storage.session.data.serverStarting, undefined);
  assert.equal(chrome.storage.session.data.link.state, 'ok');
  host.startingSeen = undefined;
  await linkUp('locate'); // a locate never says "starting"
  assert.equal(host.startingSeen, undefined);
});

test('an answer that is not a loopback http origin with a token is not stored', async () => {
  await chrome.storage.local.set({ disclosureAccepted: true, serverUrl: 'http://127.0.0.1:37711', token: 'OLD' });
  for (const reply of [
    { ok: true, running: true, url: 'http://evil.example:37711', token: 'X' },
    { ok: true, running: true, url: 'https://127.0.0.1:1', token: 'X' },
    { ok: true, running: true, url: 'http://127.0.0.1:40001', token: '' },
    { ok: true, running: false, url: 'http://127.0.0.1:40001' },
    { ok: false, error: { code: 'not_ours', message: 'port 1 is answered by another program' } },
    null,
  ]) {
    host.reply = reply;
    assert.equal((await linkUp('start')).ok, false, JSON.stringify(reply));
    assert.equal(chrome.storage.local.data.token, 'OLD');
    assert.equal(chrome.storage.local.data.serverUrl, 'http://127.0.0.1:37711');
  }
});

test('no host installed reads as "absent", another failure as "error"', async () => {
  await chrome.storage.local.set({ disclosureAccepted: true });
  host.fails = 'Specified native messaging host not found.';
  await linkUp('locate');
  assert.equal(chrome.storage.session.data.link.state, 'absent');
  host.fails = 'Access to the specified native messaging host is forbidden.';
  await linkUp('locate');
  assert.equal(chrome.storage.session.data.link.state, 'error');
  assert.match(chrome.storage.session.data.link.message, /forbidden/);
  assert.equal(chrome.storage.local.data.token, undefined);
});
