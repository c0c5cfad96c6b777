// Which chat site is this page: extension/shared/sites.js against fixtures/chat-site-cases.json
// (testkit/registry.py site_for_url runs the same file in Python), and the content extractor and the
// background both answer through it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import '../../extension/shared/sites.js';

const Sites = globalThis.WherefromSites;
const registry = JSON.parse(readFileSync(new URL('../../extension/sites/registry.json', import.meta.url), 'utf8'));
const { cases } = JSON.parse(readFileSync(new URL('../../fixtures/chat-site-cases.json', import.meta.url), 'utf8'));
const patterns = JSON.parse(readFileSync(new URL('../../fixtures/match-pattern-cases.json', import.meta.url), 'utf8')).cases;

test('the shared file has cases both ways', () => {
  assert.ok(cases.length >= 25);
  assert.ok(cases.some((/** @type {any} */ c) => c.site === null) && cases.some((/** @type {any} */ c) => c.site));
});

for (const c of cases) {
  test(`chat site of ${c.url}`, () => {
    const site = Sites.siteFor(c.url, registry);
    assert.equal(site ? site.id : null, c.site);
    assert.equal((Sites.siteFor(c.url, registry.sites) || { id: null }).id, c.site, 'a list of sites too');
  });
}

for (const c of patterns) {
  test(`match pattern ${c.pattern}`, () => {
    assert.equal(Sites.parseMatchPattern(c.pattern) !== null, c.valid);
    assert.equal(Sites.patternHost(c.pattern), c.host);
  });
}

test('match-pattern cases both ways', () => {
  assert.ok(patterns.some((/** @type {{valid: boolean}} */ c) => c.valid) && patterns.some((/** @type {{valid: boolean}} */ c) => !c.valid));
});

test('content and background hold no matcher of their own', () => {
  const extractor = readFileSync(new URL('../../extension/content/extractor.js', import.meta.url), 'utf8');
  const governance = readFileSync(new URL('../../extension/background/governance.js', import.meta.url), 'utf8');
  assert.match(extractor, /WherefromSites/);
  assert.ok(!/new RegExp/.test(extractor.split('// ---------------------------------------------------------------- DOM queries')[0]));
  assert.match(governance, /Sites\.siteFor\(/);
  assert.match(governance, /Sites\.patternHost\(/);
  assert.ok(!/:\\\/\\\//.test(governance), 'governance.js parses no match pattern itself');
  assert.ok(!/endsWith\('\.' \+/.test(governance), 'governance.js: host suffix matching is shared/urls.js hostOrSubdomain');
  const files = JSON.parse(readFileSync(new URL('../../extension/content/files.json', import.meta.url), 'utf8'));
  assert.ok(files.indexOf('shared/sites.js') >= 0 && files.indexOf('shared/sites.js') < files.indexOf('content/extractor.js'));
});
