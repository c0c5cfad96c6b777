// URL normalisation parity: extension/shared/urls.js against fixtures/url-cases.json, the file
// tests/vectors/test_url_cases.py runs through server/urls.py.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { normaliseUrl, tryNormaliseUrl, hostOf, BadUrl } from '../../extension/shared/urls.js';

const { cases } = JSON.parse(readFileSync(new URL('../../fixtures/url-cases.json', import.meta.url), 'utf8'));

test('the shared file has at least 40 cases', () => assert.ok(cases.length >= 40));

for (const c of cases) {
  test(`url case: ${c.name}`, () => {
    if (c.expect === null) {
      assert.throws(() => normaliseUrl(c.url), BadUrl);
      assert.equal(tryNormaliseUrl(c.url), null);
    } else {
      assert.equal(normaliseUrl(c.url), c.expect);
      assert.equal(normaliseUrl(c.expect), c.expect, 'idempotent');
    }
  });
}

test('hostOf', () => {
  assert.equal(hostOf('https://User@Sub.Example.com:8080/x'), 'sub.example.com');
  assert.equal(hostOf('https://[::1]:80/'), '[::1]');
  assert.equal(hostOf('not a url'), '');
});

test('IDN hosts are spelled as the browser spells them', () => {
  assert.equal(hostOf('https://faß.de/'), 'xn--fa-hia.de');
  assert.equal(hostOf('https://Bücher.example/'), 'xn--bcher-kva.example');
});
