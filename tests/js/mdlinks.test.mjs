import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mapMarkdownLinks } from '../../extension/shared/mdlinks.js';
import { dropTracking } from '../../extension/shared/urls.js';

test('dropTracking keeps everything but the trackers', () => {
  assert.equal(dropTracking('https://www.deadrat.in/?utm_source=chatgpt.com'), 'https://www.deadrat.in/');
  assert.equal(dropTracking('https://a.example/p?b=2&utm_medium=x&a=1#frag'), 'https://a.example/p?b=2&a=1#frag');
  assert.equal(dropTracking('https://a.example/p?q=fts5'), 'https://a.example/p?q=fts5');
  assert.equal(dropTracking('mailto:x@y.example?ref=1'), 'mailto:x@y.example?ref=1');
});

test('links lose trackers; code keeps them byte for byte', () => {
  const md = [
    'See [docs](https://a.example/x?utm_source=chat&id=1) and `[c](https://a.example/?utm_source=s)`.',
    '',
    '```md',
    '[kept](https://a.example/?utm_source=code)',
    '```',
    '[t](https://a.example/w_\\(x\\)?fbclid=1 "title")',
  ].join('\n');
  assert.equal(mapMarkdownLinks(md, dropTracking), [
    'See [docs](https://a.example/x?id=1) and `[c](https://a.example/?utm_source=s)`.',
    '',
    '```md',
    '[kept](https://a.example/?utm_source=code)',
    '```',
    '[t](https://a.example/w_\\(x\\) "title")',
  ].join('\n'));
});
