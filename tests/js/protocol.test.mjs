// The message protocol: directions, schemas, trust tiers (shared/protocol.js) and the
// background's sender classification (background/messages.js senderKind).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import '../../extension/shared/protocol.js';
import { senderKind } from '../../extension/background/messages.js';

const P = globalThis.WherefromProtocol;
const ID = 'gidncpejkfcnakpojbbbhocinihfkjmj';
const ORIGIN = `chrome-extension://${ID}`;

test('the protocol object is frozen and names types by direction', () => {
  assert.ok(Object.isFrozen(P));
  assert.equal(P.CAPTURE_TURNS, 'content:capture-turns');
  assert.equal(P.SELECTOR_MISS, 'content:selector-miss');
  assert.equal(P.INSERT_TEXT, 'background:insert-text');
  for (const [name, type] of Object.entries(P.TYPES)) {
    const prefix = name.startsWith('PANEL_') ? 'panel:' : name === 'INSERT_TEXT' ? 'background:' : 'content:';
    assert.ok(type.startsWith(prefix), `${name} = ${type}`);
  }
});

test('a content sender may send content types', () => {
  const ok = P.validate({ type: P.CAPTURE_TURNS, payload: { site: 'chatgpt', turns: [{ role: 'user', text: 'hi' }], settled: true } }, 'content');
  assert.equal(ok.ok, true);
  assert.equal(P.validate({ type: P.SELECTOR_MISS, payload: { site: 'claude', detail: 'no layout matched (a)' } }, 'content').ok, true);
  assert.equal(P.validate({ type: 'content:ready' }, 'content').ok, false, 'an undeclared type is refused');
});

test('a content sender can never use panel types', () => {
  for (const [name, type] of Object.entries(P.TYPES)) {
    if (!name.startsWith('PANEL_')) continue;
    const r = P.validate({ type, payload: {} }, 'content');
    assert.equal(r.ok, false, `${type} accepted from content`);
  }
  // the ones that matter most, with well-formed payloads
  assert.equal(P.validate({ type: P.PANEL_SET_RULE, payload: { host: 'bank.com', mode: 'collect' } }, 'content').ok, false);
  assert.equal(P.validate({ type: P.PANEL_PAIR, payload: { token: 'x' } }, 'content').ok, false);
  assert.equal(P.validate({ type: P.PANEL_SET_PAGE_MEMORY, payload: { on: true } }, 'content').ok, false);
  assert.equal(P.validate({ type: P.PANEL_GET_STATE, payload: {} }, 'content').ok, false);
});

test('a panel sender cannot send content types, and nobody can send background types to the worker', () => {
  assert.equal(P.validate({ type: P.CAPTURE_TURNS, payload: { site: 'x', turns: [] } }, 'panel').ok, false);
  assert.equal(P.validate({ type: P.INSERT_TEXT, payload: { text: 'x' } }, 'panel').ok, false);
  assert.equal(P.validate({ type: P.INSERT_TEXT, payload: { text: 'x' } }, 'content').ok, false);
  assert.equal(P.validate({ type: P.PANEL_SET_RULE, payload: { host: 'a.com', mode: 'off' } }, 'panel').ok, true);
});

test('a capture cannot carry a url, a title or a server path', () => {
  const base = { site: 'chatgpt', turns: [{ role: 'user', text: 'hi' }] };
  for (const extra of [{ url: 'https://evil.example/' }, { title: 't' }, { path: '/api/notes' }, { server: 'http://x' }]) {
    assert.equal(P.validate({ type: P.CAPTURE_TURNS, payload: { ...base, ...extra } }, 'content').ok, false, JSON.stringify(extra));
  }
  assert.equal(P.validate({ type: P.CAPTURE_TURNS, payload: base, url: 'x' }, 'content').ok, false);
});

test('payload shapes are checked', () => {
  const bad = [
    null, 'x', [], {}, { type: 'nope' }, { type: 42 },
    { type: P.CAPTURE_TURNS, payload: { site: 'a', turns: 'no' } },
    { type: P.CAPTURE_TURNS, payload: { site: 'a', turns: [{ role: 'system', text: 'x' }] } },
    { type: P.CAPTURE_TURNS, payload: { site: 'a', turns: [{ role: 'user', text: 5 }] } },
    { type: P.CAPTURE_TURNS, payload: { site: 'a', turns: [{ role: 'user', text: 'x', extra: 1 }] } },
    { type: P.CAPTURE_TURNS, payload: { site: '', turns: [] } },
    { type: P.CAPTURE_TURNS, payload: [] },
  ];
  for (const m of bad) assert.equal(P.validate(m, 'content').ok, false, JSON.stringify(m));
  assert.equal(P.validate({ type: P.PANEL_SET_RULE, payload: { host: 'a.com', mode: 'sometimes' } }, 'panel').ok, false);
  assert.equal(P.validate({ type: P.PANEL_SAVE_NOTE, payload: { tabId: 1.5, text: 'x' } }, 'panel').ok, false);
  assert.equal(P.validate({ type: P.PANEL_SAVE_NOTE, payload: { tabId: 3, text: '' } }, 'panel').ok, false);
  assert.equal(P.validate({ type: P.PANEL_SAVE_NOTE, payload: { tabId: 3, text: 'a note' } }, 'panel').ok, true);
  assert.equal(P.validate({ type: '__proto__' }, 'panel').ok, false);
  assert.equal(P.validate({ type: 'toString' }, 'panel').ok, false);
});

test('senderKind: the tier comes from what Chrome says about the sender', () => {
  const kind = (/** @type {any} */ s) => senderKind(s, ID, ORIGIN);
  assert.equal(kind({ id: ID, url: `${ORIGIN}/sidepanel/index.html` }), 'panel');
  assert.equal(kind({ id: ID, url: `${ORIGIN}/sidepanel/index.html?tabId=3`, tab: { id: 3 } }), 'panel');
  assert.equal(kind({ id: ID, url: 'https://chatgpt.com/c/1', tab: { id: 7 } }), 'content');
  assert.equal(kind({ id: ID, url: 'https://chatgpt.com/c/1' }), null, 'no tab');
  assert.equal(kind({ id: 'someoneelse', url: `${ORIGIN}/sidepanel/index.html` }), null);
  assert.equal(kind({ id: ID, url: `${ORIGIN}/other.html` }), null);
  assert.equal(kind({ id: ID, url: `chrome-extension://${ID}x/sidepanel/index.html`, tab: { id: 1 } }), null);
  assert.equal(kind({ id: ID, url: 'file:///tmp/x.html', tab: { id: 1 } }), null);
  assert.equal(kind(undefined), null);
});

test("a turn's markdown is carried and bounded", () => {
  const turn = (markdown) => ({ type: P.CAPTURE_TURNS, payload: { site: 'chatgpt', turns: [{ role: 'assistant', text: 'x', markdown }] } });
  assert.equal(P.validate(turn('```py\nx = 1\n```'), 'content').ok, true);
  assert.equal(P.validate(turn(5), 'content').ok, false);
  assert.equal(P.validate(turn('x'.repeat(400001)), 'content').ok, false);
  assert.equal(P.validate(turn('x'.repeat(400000)), 'content').ok, true);
});

test('a selector miss carries its kind, the layouts tried and a path pattern — and nothing else', () => {
  const miss = { site: 'gemini', kind: 'missing_role', layouts: ['share-turn-viewer', 'custom-elements'], path: '/app/:id' };
  assert.equal(P.validate({ type: P.SELECTOR_MISS, payload: miss }, 'content').ok, true);
  assert.equal(P.validate({ type: P.SELECTOR_MISS, payload: { ...miss, layouts: [42] } }, 'content').ok, false);
  assert.equal(P.validate({ type: P.SELECTOR_MISS, payload: { ...miss, layouts: 'custom-elements' } }, 'content').ok, false);
  assert.equal(P.validate({ type: P.SELECTOR_MISS, payload: { ...miss, kind: '' } }, 'content').ok, false);
  assert.equal(P.validate({ type: P.SELECTOR_MISS, payload: { ...miss, url: 'https://gemini.google.com/app/1' } }, 'content').ok, false,
    'a miss never names the URL');
});

/** types.d.ts WfPayloads and WfTypeNames, read as text: {type: {field: optional}} and {NAME: type}. */
function declaredTypes() {
  const dts = readFileSync(new URL('../../extension/types.d.ts', import.meta.url), 'utf8');
  const block = (/** @type {string} */ name) => {
    const start = dts.indexOf(`interface ${name} {`);
    return dts.slice(start, dts.indexOf('\n}\n', start));
  };
  /** @type {Record<string, Record<string, boolean>>} */
  const payloads = {};
  for (const m of block('WfPayloads').matchAll(/^ {2}'([^']+)': \{(.*)\};$/gm)) {
    payloads[m[1]] = Object.fromEntries([...m[2].matchAll(/(\w+)(\??):/g)].map((f) => [f[1], f[2] === '?']));
  }
  const names = Object.fromEntries([...block('WfTypeNames').matchAll(/readonly (\w+): '([^']+)';/g)].map((m) => [m[1], m[2]]));
  return { payloads, names };
}

test('types.d.ts declares the protocol the validator checks: the same types, fields and optional fields', () => {
  const { payloads, names } = declaredTypes();
  assert.deepEqual(names, { ...P.TYPES });
  assert.deepEqual(Object.keys(payloads).sort(), Object.values(P.TYPES).sort());
  for (const [type, fields] of Object.entries(payloads)) {
    const kind = P.directionOf(type);
    const empty = P.validate({ type, payload: {} }, kind);
    const required = Object.keys(fields).filter((f) => !fields[f]);
    if (required.length) assert.equal(empty.ok ? '' : empty.error, `missing ${required[0]}`, type);
    else assert.ok(empty.ok, `${type}: every declared field is optional, so {} is valid`);
    for (const f of Object.keys(fields)) {
      const r = P.validate({ type, payload: { [f]: Symbol.for('wrong') } }, kind);
      assert.ok(!r.ok && r.error !== `unknown field ${f}`, `${type}.${f} is a field the validator knows`);
    }
    const extra = P.validate({ type, payload: { notDeclared: 1 } }, kind);
    assert.ok(!extra.ok && extra.error === 'unknown field notDeclared', `${type}: the validator knows no more fields`);
  }
});

test('no consumer of the protocol casts it to any', () => {
  for (const f of ['background/messages.js', 'background/actions.js', 'sidepanel/state.js', 'background/governance.js']) {
    const src = readFileSync(new URL(`../../extension/${f}`, import.meta.url), 'utf8');
    assert.ok(!/@type \{any\}\s*\*\/\s*\(globalThis\)/.test(src), `${f} casts a global to any`);
    assert.ok(!/@param \{any\} (p|payload)\b/.test(src), `${f} takes an untyped payload`);
  }
});
