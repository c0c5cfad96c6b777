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
