// Copies the pinned npm packages the extension runs (package.json "dependencies", versions pinned
// in package-lock.json) from node_modules/ into extension/vendor/, each with its licence, and
// writes extension/vendor/VENDORED.json naming package, version and source file.
//   node scripts/vendor.mjs          refresh (after `npm ci`, or `npm install <pkg>@<version>`)
//   node scripts/vendor.mjs --check  exit 1 when extension/vendor/ differs from what it would write
// No bundler: browser builds are copied as they are; a CommonJS-only build is wrapped in an IIFE
// that sets one global, so content scripts (classic scripts) can load it; `dir:.ext` copies the
// files of a package folder that end in .ext, byte for byte (fonts).
import { readFileSync, writeFileSync, mkdirSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'extension', 'vendor');

/** What the extension loads, per package: [source file in the package, file written, how]. */
const FILES = {
  turndown: [['lib/turndown.browser.umd.js', 'turndown.js', 'copy']],
  '@joplin/turndown-plugin-gfm': [['lib/turndown-plugin-gfm.cjs.js', 'turndown-plugin-gfm.js', 'iife:turndownPluginGfm']],
  marked: [['lib/marked.esm.js', 'marked.esm.js', 'copy']],
  dompurify: [['dist/purify.es.mjs', 'purify.es.mjs', 'copy']],
  // math in chat turns: the ES module, its stylesheet and the woff2 fonts the stylesheet names first
  katex: [
    ['dist/katex.mjs', 'katex.mjs', 'copy'],
    ['dist/katex.min.css', 'katex.min.css', 'copy'],
    ['dist/fonts', 'fonts', 'dir:.woff2'],
  ],
};
const LICENCES = ['LICENSE', 'LICENSE.md', 'LICENSE.txt', 'LICENSE-MPL'];

/** @returns {Map<string, string | Buffer>} file name under extension/vendor -> content */
function plan() {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  const out = new Map();
  const manifest = [];
  for (const name of Object.keys(pkg.dependencies).sort()) {
    const how = FILES[/** @type {keyof typeof FILES} */ (name)];
    if (!how) throw new Error(`package.json depends on ${name} but scripts/vendor.mjs does not say which file to vendor`);
    const dir = join(ROOT, 'node_modules', name);
    const version = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
    const locked = lock.packages[`node_modules/${name}`].version;
    if (version !== locked) throw new Error(`${name}: node_modules has ${version}, package-lock.json pins ${locked}; run npm ci`);
    const slug = name.replace(/^@/, '').replace('/', '-');
    for (const [src, dest, mode] of how) {
      if (mode.startsWith('dir:')) {
        const files = readdirSync(join(dir, src)).filter((f) => f.endsWith(mode.slice(4))).sort();
        if (!files.length) throw new Error(`${name}: no ${mode.slice(4)} files in ${src}`);
        for (const f of files) out.set(`${slug}/${dest}/${f}`, readFileSync(join(dir, src, f)));
        manifest.push({ package: name, version, source: `${src}/*${mode.slice(4)}`, file: `${slug}/${dest}/` });
        continue;
      }
      let text = readFileSync(join(dir, src), 'utf8');
      if (mode.startsWith('iife:')) {
        const global = mode.slice(5);
        text = `// ${name} ${version} (${src}), wrapped by scripts/vendor.mjs to set globalThis.${global}\n` +
          `(function () {\nvar module = { exports: {} }; var exports = module.exports;\n${text}\n` +
          `globalThis.${global} = module.exports;\n})();\n`;
      }
      out.set(`${slug}/${dest}`, text);
      manifest.push({ package: name, version, source: src, file: `${slug}/${dest}` });
    }
    const licences = LICENCES.filter((l) => existsSync(join(dir, l)));
    if (!licences.length) throw new Error(`${name}: no licence file found`);
    for (const l of licences) out.set(`${slug}/${l}`, readFileSync(join(dir, l), 'utf8'));
  }
  out.set('VENDORED.json', JSON.stringify(manifest, null, 2) + '\n');
  return out;
}

/** @param {string} dir @returns {string[]} */
function listed(dir, prefix = '') {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listed(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]);
}

const want = plan();
if (process.argv.includes('--check')) {
  const have = listed(OUT);
  const problems = [];
  for (const [f, text] of want) {
    if (!existsSync(join(OUT, f))) problems.push(`missing ${f}`);
    else if (typeof text === 'string' ? readFileSync(join(OUT, f), 'utf8') !== text : !readFileSync(join(OUT, f)).equals(text)) problems.push(`differs ${f}`);
  }
  for (const f of have) if (!want.has(f)) problems.push(`not from package.json: ${f}`);
  if (problems.length) {
    console.error(`extension/vendor/ is stale (run node scripts/vendor.mjs):\n  ${problems.join('\n  ')}`);
    process.exit(1);
  }
  console.log(`extension/vendor/ matches package-lock.json (${want.size} files)`);
} else {
  rmSync(OUT, { recursive: true, force: true });
  for (const [f, text] of want) {
    mkdirSync(dirname(join(OUT, f)), { recursive: true });
    writeFileSync(join(OUT, f), text);
  }
  console.log(`wrote ${want.size} files to extension/vendor/`);
}
