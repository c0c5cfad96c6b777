// Every extension script parses: ES modules by importing them (which also proves their imports
// resolve), classic scripts (content scripts, protocol.js) with vm.Script.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import vm from 'node:vm';
import { execFileSync } from 'node:child_process';

const root = fileURLToPath(new URL('../../extension/', import.meta.url));

/** @param {string} dir @returns {string[]} */
function walk(dir) {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : /\.m?js$/.test(p) ? [p] : [];
  });
}

const files = walk(root);
const isModule = (/** @type {string} */ src, /** @type {string} */ file) =>
  file.endsWith('.mjs') || file.endsWith('.esm.js') || /^\s*(import|export)\s/m.test(src);

test('there are scripts to check', () => assert.ok(files.length >= 10));

for (const file of files) {
  const rel = relative(root, file);
  const src = readFileSync(file, 'utf8');
  if (isModule(src, file)) {
    test(`module parses and its imports resolve: ${rel}`, async () => {
      // panel.js and main.js touch the DOM / chrome at top level: parse without running
      // (background.test.mjs runs main.js against a fake chrome)
      if (rel.startsWith('sidepanel/') || rel === 'background/main.js') {
        execFileSync(process.execPath, ['--input-type=module', '--check'], { input: src });
        return;
      }
      await import(pathToFileURL(file).href);
    });
  } else {
    test(`classic script parses: ${rel}`, () => {
      assert.doesNotThrow(() => new vm.Script(src, { filename: rel }));
    });
  }
}
