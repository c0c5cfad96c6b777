// "This host or a subdomain of it": extension/shared/urls.js hostOrSubdomain against
// fixtures/host-cases.json, the file tests/vectors/test_host_rule.py runs through server/urls.py (and SQL).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { hostOrSubdomain, hostParents } from '../../extension/shared/urls.js';

const { cases } = JSON.parse(readFileSync(new URL('../../fixtures/host-cases.json', import.meta.url), 'utf8'));

test('the shared file has cases both ways', () => {
  assert.ok(cases.length >= 30);
  assert.deepEqual(new Set(cases.map((/** @type {any} */ c) => c.expect)), new Set([true, false]));
});

for (const c of cases) {
  test(`host case: ${c.host} | ${c.parent}`, () => {
    assert.equal(hostOrSubdomain(c.host, c.parent), c.expect);
    if (c.host) assert.equal(hostParents(c.host).includes(c.parent), c.expect);
  });
}
