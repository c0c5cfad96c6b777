// The manifest: valid match patterns for every host, commands with explicit mac keys and no
// clash with browser shortcuts (Ctrl/Cmd+B is bold in every editor), every file it names exists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import '../../extension/shared/sites.js';

const ext = new URL('../../extension/', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('manifest.json', ext), 'utf8'));
const exists = (/** @type {string} */ p) => existsSync(new URL(p, ext));

/** Chrome's match-pattern grammar: the extension's one parser (shared/sites.js). @param {string} p */
const validMatchPattern = (p) => globalThis.WherefromSites.parseMatchPattern(p) !== null;

test('manifest basics and the pinned key', () => {
  assert.equal(manifest.manifest_version, 3);
  assert.ok(manifest.key && manifest.key.startsWith('MIIB'), 'the pinned key stays');
  assert.equal(manifest.background.service_worker, 'background/main.js');
  assert.equal(manifest.background.type, 'module');
  assert.equal(manifest.side_panel.default_path, 'sidepanel/index.html');
  for (const p of ['storage', 'sidePanel', 'tabs', 'scripting', 'contextMenus', 'activeTab', 'nativeMessaging']) assert.ok(manifest.permissions.includes(p), p);
  assert.ok(!manifest.permissions.includes('<all_urls>'));
  assert.ok(!manifest.content_scripts, 'capture scripts are registered dynamically from the policy, never statically');
});

test('every host permission is a valid match pattern, loopback included', () => {
  const hosts = [...(manifest.host_permissions || []), ...(manifest.optional_host_permissions || [])];
  assert.ok(hosts.includes('http://127.0.0.1/*'));
  assert.ok(hosts.includes('http://localhost/*'));
  for (const h of hosts) assert.ok(validMatchPattern(h), h);
  assert.ok(!hosts.includes('<all_urls>') && !hosts.some((h) => /^\*:\/\/\*\//.test(h)), 'no blanket host access');
});

test('the registry match patterns, when the registry exists, are valid', () => {
  const reg = new URL('sites/registry.json', ext);
  if (!existsSync(reg)) return;
  const data = JSON.parse(readFileSync(reg, 'utf8'));
  const sites = Array.isArray(data) ? data : data.sites;
  for (const s of sites) for (const p of s.matches) assert.ok(validMatchPattern(p), `${s.id}: ${p}`);
});


test('commands: open the side panel, search and save the page, with explicit mac keys and no clash', () => {
  const cmds = manifest.commands;
  assert.ok(cmds['open-side-panel'] && cmds['save-page'] && cmds['open-search']);
  assert.ok(Object.keys(cmds).length <= 4, 'Chrome gives suggested keys to at most four commands');
  assert.ok(!cmds._execute_action && !cmds._execute_browser_action);
  // Chrome's own shortcuts and common editor/site ones a command must not take
  const reserved = new Set(['Ctrl+B', 'Command+B', 'MacCtrl+B', 'Ctrl+T', 'Ctrl+W', 'Ctrl+N', 'Ctrl+Shift+N', 'Ctrl+Shift+T',
    'Ctrl+L', 'Ctrl+D', 'Ctrl+Shift+B', 'Ctrl+H', 'Ctrl+J', 'Ctrl+P', 'Ctrl+S', 'Ctrl+F', 'Ctrl+R', 'Alt+Shift+I', 'Alt+Shift+T', 'Alt+F', 'Alt+E']);
  const seen = new Set();
  for (const [name, c] of Object.entries(cmds)) {
    assert.ok(c.description, `${name} has a description`);
    const keys = c.suggested_key;
    assert.ok(keys && keys.default && keys.mac, `${name} has default and mac keys`);
    for (const [platform, key] of Object.entries(keys)) {
      assert.match(key, /^(Ctrl|Alt|Command|MacCtrl)(\+(Shift|Alt|Ctrl|Command|MacCtrl))*\+[A-Z0-9]$/, `${name}/${platform}: ${key}`);
      assert.ok(!reserved.has(key), `${name}/${platform}: ${key} clashes with a browser shortcut`);
      assert.ok(!/^(Ctrl|Command|MacCtrl)\+B$/.test(key), 'never Ctrl/Cmd+B (bold)');
      const mods = key.split('+').slice(0, -1);
      assert.ok(mods.length >= 2 || mods[0] === 'Alt', `${name}/${platform}: a bare Ctrl/Command combination is too easy to clash`);
      assert.ok(!seen.has(`${platform}:${key}`), `duplicate ${key}`);
      seen.add(`${platform}:${key}`);
    }
  }
});

test('every file the manifest names exists', () => {
  const files = [
    manifest.background.service_worker,
    manifest.side_panel.default_path,
    ...Object.values(manifest.icons || {}),
    ...Object.values((manifest.action && manifest.action.default_icon) || {}),
  ];
  for (const f of files) assert.ok(exists(f), f);
});

test('every file the side panel page loads exists', () => {
  const html = readFileSync(new URL('sidepanel/index.html', ext), 'utf8');
  for (const [, ref] of html.matchAll(/(?:src|href)="([^"]+)"/g)) {
    assert.ok(exists(new URL(ref, new URL('sidepanel/index.html', ext)).pathname.replace(ext.pathname, '')), ref);
  }
});

test('icons are PNGs of the declared size', () => {
  for (const [size, file] of Object.entries(manifest.icons)) {
    const buf = readFileSync(new URL(file, ext));
    assert.equal(buf.subarray(1, 4).toString(), 'PNG');
    assert.equal(buf.readUInt32BE(16), Number(size));
    assert.equal(buf.readUInt32BE(20), Number(size));
  }
});
