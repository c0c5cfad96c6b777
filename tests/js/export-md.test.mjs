// A conversation as a Markdown file (sidepanel/export-md.js): front matter a YAML parser reads
// back exactly (title, url, site, captured), turns in order, the captured Markdown when present.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { conversationMarkdown, fileName, isoTime, turnMarkdown } from '../../extension/sidepanel/export-md.js';

const conv = {
  url: 'https://chatgpt.com/c/abc',
  title: 'Dog names: "Biscuit" & co\nsecond line',
  site: 'chatgpt',
  source_host: 'chatgpt.com',
  captured_at: 1764600000.25,
  turns: [
    { role: 'user', text: 'Name my dog' },
    { role: 'assistant', text: 'Biscuit (plain)', markdown: '**Biscuit**\n\n```js\nx = 1\n```\n' },
  ],
};

/** The front matter's key: value lines, values read as YAML double-quoted (= JSON) scalars. */
function frontMatter(md) {
  const [, head] = md.split('---\n');
  return Object.fromEntries(head.trim().split('\n').map((line) => {
    const i = line.indexOf(': ');
    return [line.slice(0, i), JSON.parse(line.slice(i + 2))];
  }));
}

test('front matter carries title, url, site and capture time, quoted safely', () => {
  const md = conversationMarkdown(conv);
  assert.ok(md.startsWith('---\n'));
  assert.deepEqual(frontMatter(md), {
    title: conv.title, url: conv.url, site: 'chatgpt', captured: '2025-12-01T14:40:00Z',
  });
});

test('turns in order under who spoke, Markdown preferred over text', () => {
  const md = conversationMarkdown(conv);
  const body = md.split('---\n')[2];
  assert.ok(body.startsWith('\n# Dog names: "Biscuit" & co second line\n'));
  const you = body.indexOf('## You\n\nName my dog');
  const bot = body.indexOf('## Assistant\n\n**Biscuit**\n\n```js\nx = 1\n```\n');
  assert.ok(you > 0 && bot > you, body);
  assert.ok(!body.includes('Biscuit (plain)'));
  assert.equal(turnMarkdown({ role: 'user', text: 't', markdown: '  ' }), 't');
});

test('site falls back to the host; a missing time is empty, not "Invalid Date"', () => {
  const md = conversationMarkdown({ url: 'https://x.example/', turns: [], source_host: 'x.example' });
  assert.deepEqual(frontMatter(md), { title: 'https://x.example/', url: 'https://x.example/', site: 'x.example', captured: '' });
  assert.equal(isoTime(null), '');
});

test('file names are safe and never empty', () => {
  assert.equal(fileName(conv), 'dog-names-biscuit-co-second-line.md');
  assert.equal(fileName({ url: 'u', title: '../../etc/passwd', turns: [] }), 'etc-passwd.md');
  assert.equal(fileName({ url: 'u', title: '???', turns: [] }), 'conversation.md');
  assert.equal(fileName({ url: 'u', title: 'Café über', turns: [] }), 'cafe-uber.md');
  assert.ok(fileName({ url: 'u', title: 'x'.repeat(300), turns: [] }).length <= 83);
});
