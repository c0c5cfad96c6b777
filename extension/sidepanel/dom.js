// DOM helpers shared by the panel's views. Nodes are built with textContent only, never innerHTML.

/** @param {string} id */
export const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * @param {string} tag
 * @param {{class?: string, text?: string, attrs?: Record<string, string>}} [opts]
 * @param {(Node | string | null | false | undefined)[]} [children]
 */
export function el(tag, opts = {}, children = []) {
  const node = document.createElement(tag);
  if (opts.class) node.className = opts.class;
  if (opts.text !== undefined) node.textContent = opts.text;
  for (const [k, v] of Object.entries(opts.attrs || {})) node.setAttribute(k, v);
  for (const c of children) if (c) node.append(c);
  return node;
}

// The server marks matched words in search snippets with two private-use characters (never
// HTML; server/memory/snippets.py): U+E000 before a word, U+E001 after it.
export const MARK_START = '\uE000';
export const MARK_END = '\uE001';

/**
 * Text with the server's marks as <mark> elements, every piece through textContent.
 * @param {string} s
 * @returns {DocumentFragment}
 */
export function marked(s) {
  const frag = document.createDocumentFragment();
  let inMark = false;
  let buf = '';
  const flush = () => {
    if (!buf) return;
    frag.append(inMark ? el('mark', { text: buf }) : document.createTextNode(buf));
    buf = '';
  };
  for (const ch of String(s || '')) {
    if (ch === MARK_START || ch === MARK_END) {
      flush();
      inMark = ch === MARK_START;
    } else {
      buf += ch;
    }
  }
  flush();
  return frag;
}

/** @param {string} s the text without the server's marks */
export const unmarked = (s) => String(s || '').replace(/[\uE000\uE001]/g, '');

/** Only http(s) URLs are ever opened or linked. @param {unknown} url */
export const webUrl = (url) => typeof url === 'string' && /^https?:\/\//i.test(url);
