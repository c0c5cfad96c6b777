// Content messages are bounded: every field of every content-script message is bounded. A web page controls
// what its content script sees, so a field it can fill is refused when over its bound (never
// stored): the selector-miss `detail` used to be unbounded and saved to chrome.storage.local.
// Each refusal has a positive control: the same message at its bound is accepted (and stored).
import { test, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { makeChrome, makeFetch } from './fake-chrome.mjs';

const chrome = makeChrome();
globalThis.chrome = /** @type {any} */ (chrome);
const { fetch } = makeFetch(async () => ({ status: 503, body: { error: { code: 'down', message: 'down' } } }));
globalThis.fetch = /** @type {any} */ (fetch);
globalThis.createImageBitmap = /** @type {any} */ (async () => ({}));
globalThis.OffscreenCanvas = /** @type {any} */ (class {
  getContext() {
    return { drawImage() {}, getImageData() { return { data: new Uint8ClampedArray(8) }; } };
  }
});

await import('../../extension/background/main.js');
const P = /** @type {any} */ (globalThis).WherefromProtocol;

/** @param {any} msg @param {any} sender */
const message = (msg, sender) => new Promise((res) => chrome.listeners['runtime.onMessage'][0](msg, sender, res));
const CONTENT = { id: chrome.runtime.id, url: 'https://claude.ai/chat/1', tab: { id: 7, url: 'https://claude.ai/chat/1', title: 'Chat' } };
const stored = async () => (await chrome.storage.local.get('selectorMisses')).selectorMisses || [];

beforeEach(async () => {
  await chrome.storage.local.clear();
});

test('a selector-miss detail of 8 MiB is refused and nothing is stored', async () => {
  const r = await message({ type: P.SELECTOR_MISS, payload: { site: 'claude', detail: 'x'.repeat(8 * 1024 * 1024) } }, CONTENT);
  assert.equal(r.ok, false);
  assert.deepEqual(await stored(), []);
});

test('control: a selector-miss detail at its bound is accepted and stored whole', async () => {
  const detail = 'y'.repeat(P.LIMITS.detail);
  const r = await message({ type: P.SELECTOR_MISS, payload: { site: 'claude', detail } }, CONTENT);
  assert.equal(r.ok, true);
  const misses = await stored();
  assert.equal(misses.length, 1);
  assert.equal(misses[0].detail, detail);
});

test('a selector-miss detail one over its bound, or not a string, is refused', () => {
  for (const detail of ['z'.repeat(P.LIMITS.detail + 1), { nested: 'x'.repeat(100) }, ['a'], 12]) {
    assert.equal(P.validate({ type: P.SELECTOR_MISS, payload: { site: 'claude', detail } }, 'content').ok, false);
  }
});

test('the stored list of misses stays bounded however many arrive', async () => {
  for (let i = 0; i < 60; i++) await message({ type: P.SELECTOR_MISS, payload: { site: 'claude', detail: `miss ${i}` } }, CONTENT);
  const misses = await stored();
  assert.equal(misses.length, 50);
  assert.equal(misses.at(-1).detail, 'miss 59');
});

/** Every field of every content message: a value over its bound is refused, at its bound accepted. */
const turn = (/** @type {string} */ text) => ({ role: 'user', text });
const CASES = [
  ['site (capture)', P.CAPTURE_TURNS, { site: 'c'.repeat(64), turns: [] }, { site: 'c'.repeat(65), turns: [] }],
  ['site (miss)', P.SELECTOR_MISS, { site: 'c'.repeat(64) }, { site: 'c'.repeat(65) }],
  ['turn count', P.CAPTURE_TURNS, { site: 's', turns: Array(P.LIMITS.turns).fill(turn('a')) },
    { site: 's', turns: Array(P.LIMITS.turns + 1).fill(turn('a')) }],
  ['turn text', P.CAPTURE_TURNS, { site: 's', turns: [turn('t'.repeat(P.LIMITS.text))] },
    { site: 's', turns: [turn('t'.repeat(P.LIMITS.text + 1))] }],
  ['native id', P.CAPTURE_TURNS, { site: 's', turns: [{ ...turn('a'), native_id: 'n'.repeat(300) }] },
    { site: 's', turns: [{ ...turn('a'), native_id: 'n'.repeat(301) }] }],
  ['capture text in total', P.CAPTURE_TURNS,
    { site: 's', turns: Array(Math.floor(P.LIMITS.contentChars / P.LIMITS.text)).fill(turn('t'.repeat(P.LIMITS.text))) },
    { site: 's', turns: Array(Math.floor(P.LIMITS.contentChars / P.LIMITS.text) + 1).fill(turn('t'.repeat(P.LIMITS.text))) }],
  ['an unknown field', P.SELECTOR_MISS, { site: 's' }, { site: 's', extra: 'x' }],
  ['a turn field', P.CAPTURE_TURNS, { site: 's', turns: [turn('a')] }, { site: 's', turns: [{ ...turn('a'), html: '<b>' }] }],
];

for (const [name, type, ok, over] of CASES) {
  test(`content message bound: ${name}`, () => {
    assert.equal(P.validate({ type, payload: ok }, 'content').ok, true, 'at the bound: accepted');
    assert.equal(P.validate({ type, payload: over }, 'content').ok, false, 'over the bound: refused');
  });
}

test('every content message type has a case above (a new type must be bounded too)', () => {
  const content = Object.values(P.TYPES).filter((t) => String(t).startsWith('content:'));
  assert.deepEqual(new Set(content), new Set(CASES.map((c) => c[1])));
});
