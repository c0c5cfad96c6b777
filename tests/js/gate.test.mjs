// The extension's one gate (background/gate.js): decide(url) -> {level, url, host, reason} with
// ordered levels off < suggest < collect (anything unknown folds into off), and the predicates
// mayRead / mayWrite every call site uses. Runs the pure decideWith on a table, then decide()
// over a fake chrome.storage, then checks that no other background module re-derives the rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { makeChrome } from './fake-chrome.mjs';

const chrome = makeChrome();
globalThis.chrome = /** @type {any} */ (chrome);
/** @type {string[]} */
const fetched = [];
globalThis.fetch = /** @type {any} */ (async (/** @type {string} */ url) => {
  fetched.push(String(url));
  throw new TypeError('Failed to fetch');
});

const { decide, decideWith, mayRead, mayWrite, rank, LEVELS } = await import('../../extension/background/gate.js');

const sens = JSON.parse(readFileSync(new URL('../../server/governance/sensitive.json', import.meta.url), 'utf8'));
/** @param {{host: string, mode: string}[]} rules */
const policy = (rules) => ({
  version: 'v1', global_default: 'collect', rules,
  sensitive: { domains: sens.domains, suffixes: sens.suffixes, labels: sens.labels, exact: sens.exact },
});
const P = policy([
  { host: 'offsite.example', mode: 'off' },
  { host: 'look.example', mode: 'suggest' },
  { host: 'weird.example', mode: 'bogus' },
]);

test('levels are ordered and anything else ranks as off', () => {
  assert.deepEqual([...LEVELS], ['off', 'suggest', 'collect']);
  assert.ok(rank('off') < rank('suggest') && rank('suggest') < rank('collect'));
  for (const odd of ['unknown', '', undefined, null, 'COLLECT']) assert.equal(rank(odd), 0);
});

const CASES = [
  // [url, memoryOn, policy, level, reason, host]
  ['https://Example.com/a?utm_source=x', true, P, 'collect', 'default', 'example.com'],
  ['https://www.offsite.example/secret', true, P, 'off', 'rule:offsite.example', 'www.offsite.example'],
  ['https://look.example/', true, P, 'suggest', 'rule:look.example', 'look.example'],
  ['https://weird.example/', true, P, 'off', 'rule:weird.example', 'weird.example'],
  ['https://www.chase.com/login', true, P, 'off', null, 'www.chase.com'],
  ['https://example.com/a', false, P, 'off', 'memory-off', 'example.com'],
  ['https://example.com/a', true, null, 'off', 'no-policy', 'example.com'],
  ['chrome://settings', true, P, 'off', 'unsupported', ''],
  ['about:blank', true, P, 'off', 'unsupported', ''],
  ['', true, P, 'off', 'unsupported', ''],
  [undefined, true, P, 'off', 'unsupported', ''],
  ['chrome://settings', false, P, 'off', 'memory-off', ''],
];

for (const [url, memoryOn, pol, level, reason, host] of CASES) {
  test(`decide ${String(url)} (memory ${memoryOn ? 'on' : 'off'}${pol ? '' : ', no policy'})`, () => {
    const d = decideWith(/** @type {any} */ (url), { memoryOn: /** @type {boolean} */ (memoryOn), policy: /** @type {any} */ (pol) });
    assert.equal(d.level, level);
    assert.equal(d.host, host);
    if (reason) assert.equal(d.reason, reason);
    else assert.match(d.reason, /^sensitive:/);
    assert.ok(LEVELS.includes(d.level));
    assert.equal(mayRead(d), level !== 'off');
    assert.equal(mayWrite(d), level === 'collect');
  });
}

test('a written URL is the normalised one', () => {
  const d = decideWith('HTTPS://Example.COM:443/a/?utm_source=x#f', { memoryOn: true, policy: P });
  assert.equal(d.url, 'https://example.com/a');
});

test('decide() reads the switch and the snapshot from storage; memory off fetches nothing', async () => {
  await chrome.storage.local.set({ token: 'T', policy: P });
  let d = await decide('https://example.com/a');
  assert.deepEqual([d.level, d.reason], ['off', 'memory-off']);
  assert.deepEqual(fetched, []);
  await chrome.storage.local.set({ pageMemory: true, disclosureAccepted: false });
  assert.equal((await decide('https://example.com/a')).reason, 'memory-off'); // disclosure first
  await chrome.storage.local.set({ disclosureAccepted: true });
  d = await decide('https://example.com/a');
  assert.deepEqual([d.level, d.reason, d.host], ['collect', 'default', 'example.com']);
  assert.equal((await decide('https://offsite.example/x')).level, 'off');
  assert.deepEqual(fetched, []); // the cached snapshot decided: nothing left the browser
});

test('no other background module re-derives the tab decision', () => {
  const dir = new URL('../../extension/background/', import.meta.url);
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.js') || name === 'gate.js') continue;
    const src = readFileSync(new URL(name, dir), 'utf8');
    assert.ok(!/\bpageMode\b/.test(src), `${name}: pageMode is gone, use gate.decide`);
    assert.ok(!/'unknown'/.test(src), `${name}: 'unknown' is not a mode`);
    // resolve() only in governance.js (which hosts get the capture script), never per tab
    if (name !== 'governance.js') assert.ok(!/(?<!Promise\.)\bresolve\(/.test(src), `${name}: resolves a mode itself`);
    if (!['store.js', 'main.js', 'messages.js', 'governance.js'].includes(name)) {
      assert.ok(!/\bpageMemoryOn\(/.test(src), `${name}: reads the page-memory switch itself`);
    }
  }
});
