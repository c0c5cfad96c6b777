// extension/vendor/ holds exactly what scripts/vendor.mjs writes from the versions pinned in
// package-lock.json (each with its licence): a hand edit or a stale copy fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const root = new URL('../../', import.meta.url);

test('vendored packages match package-lock.json', (t) => {
  if (!existsSync(new URL('node_modules/turndown/package.json', root))) {
    if (process.env.WF_REQUIRE_ALL) assert.fail('node_modules missing: run ./scripts/setup --test');
    t.skip('node_modules missing (npm ci)');
    return;
  }
  const out = execFileSync('node', ['scripts/vendor.mjs', '--check'], { cwd: root, encoding: 'utf8' });
  assert.match(out, /matches package-lock.json/);
});

test('every vendored file is listed with a pinned version and a licence beside it', () => {
  const listed = JSON.parse(readFileSync(new URL('extension/vendor/VENDORED.json', root), 'utf8'));
  const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8'));
  assert.ok(listed.length >= 4);
  for (const entry of listed) {
    assert.equal(entry.version, lock.packages[`node_modules/${entry.package}`].version, entry.package);
    const dir = entry.file.split('/')[0];
    assert.ok(existsSync(new URL(`extension/vendor/${dir}/LICENSE`, root)), `${dir} has its licence`);
  }
});
