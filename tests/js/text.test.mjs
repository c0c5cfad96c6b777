import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { capChars } from '../../extension/shared/text.js';

const { cases } = JSON.parse(readFileSync(new URL('../../fixtures/cap-cases.json', import.meta.url), 'utf8'));

test('there are cap cases', () => assert.ok(cases.length >= 15));
for (const c of cases) {
  test(`capChars: ${c.name}`, () => {
    assert.equal(capChars(c.text, c.limit, { ellipsis: c.ellipsis }), c.expect);
  });
}

const md = JSON.parse(readFileSync(new URL('../../fixtures/markdown-cap-cases.json', import.meta.url), 'utf8'));
for (const c of md.cases) {
  test(`capMarkdown: ${c.name}`, async () => {
    const { capMarkdown } = await import('../../extension/shared/text.js');
    assert.equal(capMarkdown(c.text, c.limit), c.expect);
  });
}

test('capMarkdown never leaves a fence open', async () => {
  const { capMarkdown, openFence } = await import('../../extension/shared/text.js');
  const text = 'intro\n\n```py\ndef f():\n    return 1\n```\n\n~~~\nx\n~~~\n\nafter';
  for (let limit = 0; limit <= text.length; limit++) {
    const got = capMarkdown(text, limit);
    assert.ok(Array.from(got).length <= limit && openFence(got) === null, `${limit}: ${JSON.stringify(got)}`);
  }
  assert.equal(openFence('```\nopen'), '```');
});

const titled = JSON.parse(readFileSync(new URL('../../fixtures/title-heading-cases.json', import.meta.url), 'utf8'));
test('there are title-heading cases', () => assert.ok(titled.cases.length >= 10));
for (const c of titled.cases) {
  test(`withoutTitle: ${c.name}`, async () => {
    const { withoutTitle } = await import('../../extension/shared/text.js');
    assert.equal(withoutTitle(c.markdown, c.title), c.expect);
  });
}
