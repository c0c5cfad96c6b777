// A library delete with an undo (background/library.js): held UNDO_MS in chrome.storage.local,
// sent once when due, never when undone, kept pending while the server is down, and left out of
// the panel's list meanwhile. The fetch is a fake server that records every request.
import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { makeChrome, makeFetch } from './fake-chrome.mjs';

const chrome = makeChrome();
globalThis.chrome = /** @type {any} */ (chrome);
const srv = { up: true, docs: new Set([1, 2, 3]) };
const { fetch, calls } = makeFetch(async (method, url) => {
  if (!srv.up) throw new TypeError('Failed to fetch');
  const m = url.pathname.match(/^\/api\/library\/(\d+)$/);
  if (method === 'DELETE' && m) {
    const id = Number(m[1]);
    if (!srv.docs.delete(id)) return { status: 404, body: { error: { code: 'not_found', message: 'no such document' } } };
    return { body: { removed: id } };
  }
  return { status: 404, body: { error: { code: 'not_found', message: 'no' } } };
});
globalThis.fetch = /** @type {any} */ (fetch);
/** @type {Function[]} the worker's timers, run by hand */
const timers = [];
globalThis.setTimeout = /** @type {any} */ ((/** @type {Function} */ fn) => { timers.push(fn); return 0; });

const lib = await import('../../extension/background/library.js');
const deletes = () => calls.filter((c) => c.method === 'DELETE').map((c) => Number(new URL(c.url).pathname.split('/').pop()));

beforeEach(async () => {
  await chrome.storage.local.clear();
  await chrome.storage.local.set({ token: 'T', serverUrl: 'http://127.0.0.1:37711' });
  calls.length = 0;
  timers.length = 0;
  srv.up = true;
  srv.docs = new Set([1, 2, 3]);
});

test('a delete waits for its window, then goes out once', async () => {
  const t0 = 1_000_000;
  assert.deepEqual(await lib.scheduleDelete(1, t0), { ok: true, undoMs: lib.UNDO_MS });
  assert.deepEqual([...(await lib.pendingIds())], [1], 'left out of the list meanwhile');
  await lib.flushDeletes(t0 + lib.UNDO_MS - 1);
  assert.deepEqual(deletes(), [], 'nothing before the window ends');
  assert.equal(timers.length, 1, 'the worker set its timer');
  await lib.flushDeletes(t0 + lib.UNDO_MS);
  await lib.flushDeletes(t0 + lib.UNDO_MS + 5000);
  assert.deepEqual(deletes(), [1]);
  assert.deepEqual([...(await lib.pendingIds())], []);
  assert.ok(!srv.docs.has(1));
});

test('undo inside the window: nothing reaches the server', async () => {
  await lib.scheduleDelete(2, 0);
  assert.equal(await lib.undoDelete(2), true);
  assert.equal(await lib.undoDelete(2), false, 'a second undo has nothing to undo');
  await lib.flushDeletes(lib.UNDO_MS * 10);
  assert.deepEqual(deletes(), []);
  assert.ok(srv.docs.has(2));
});

test('server down: the delete stays pending and goes out when it is back', async () => {
  await lib.scheduleDelete(3, 0);
  srv.up = false;
  const r = await lib.flushDeletes(lib.UNDO_MS);
  assert.equal(r.sent, 0);
  assert.equal(r.failures.length, 1);
  assert.deepEqual([...(await lib.pendingIds())], [3]);
  srv.up = true;
  await lib.flushDeletes(lib.UNDO_MS);
  assert.deepEqual([...(await lib.pendingIds())], []);
  assert.ok(!srv.docs.has(3));
});

test('a document already gone (404) is not retried forever', async () => {
  srv.docs.delete(1);
  await lib.scheduleDelete(1, 0);
  await lib.flushDeletes(lib.UNDO_MS);
  await lib.flushDeletes(lib.UNDO_MS);
  assert.deepEqual(deletes(), [1]);
  assert.deepEqual([...(await lib.pendingIds())], []);
});
