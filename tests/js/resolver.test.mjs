// Resolver parity: extension/shared/resolver.js against fixtures/policy-cases.json, the file the
// server's tests/vectors/test_policy_cases.py runs through server/governance/resolver.py.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve, cleanHost } from '../../extension/shared/resolver.js';

const root = new URL('../../', import.meta.url);
const read = (/** @type {string} */ p) => JSON.parse(readFileSync(new URL(p, root), 'utf8'));
const { cases } = read('fixtures/policy-cases.json');
const sens = read('server/governance/sensitive.json');
const sensitive = Object.fromEntries(['domains', 'suffixes', 'labels', 'exact'].map((k) => [k, sens[k] || {}]));

test('the shared file has cases', () => {
  assert.ok(cases.length >= 30, `only ${cases.length} cases`);
});

for (const c of cases) {
  test(`policy case: ${c.name}`, () => {
    const got = resolve(c.host, { global_default: 'collect', rules: c.rules, sensitive });
    assert.deepEqual({ mode: got.mode, reason: got.reason }, c.expect);
  });
}

test('global default other than collect is honoured', () => {
  assert.equal(resolve('example.com', { global_default: 'suggest', rules: [], sensitive }).mode, 'suggest');
});

test('a missing snapshot resolves to the default and never throws', () => {
  assert.deepEqual(resolve('example.com', null), { host: 'example.com', mode: 'collect', reason: 'default' });
  assert.equal(resolve('', null).reason, 'invalid-host');
});

test('cleanHost', () => {
  assert.equal(cleanHost('Example.COM:443'), 'example.com');
  assert.equal(cleanHost('[::1]:80'), '[::1]');
  assert.equal(cleanHost('::1'), '[::1]');
  assert.equal(cleanHost('bücher.de'), 'xn--bcher-kva.de');
});
