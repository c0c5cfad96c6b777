// Render stored Markdown (a captured turn, a note) for the panel: marked (GFM) → DOMPurify → a
// DocumentFragment. Nothing that came from a page runs here:
//   - raw HTML inside the Markdown is never HTML: marked's `html` tokens are rendered as text;
//   - DOMPurify keeps only the tags Markdown produces (no img, no script, no style, no form),
//     only href/title/align/class attributes, and only http(s)/mailto links;
//   - images become links (never loaded: the panel fetches nothing from a page's hosts);
//   - links open in a new tab without a referrer; a `javascript:` link is text.
// Code blocks are <pre><code> with a Copy button.
// Math (TeX in $…$, $$…$$, \(…\), \[…\]) is lifted out by marked extensions before Markdown can
// touch it (an `_` or `*` in TeX is not emphasis), carried through the sanitiser as the text of a
// <span class="math">, and rendered AFTER sanitising by the vendored KaTeX, which builds its nodes
// itself from the TeX (trust off: no \href, \url, \html*; a formula it cannot parse shows as its
// source). A dollar amount ($5 and $10) is not math: an opening $ is followed by a non-space, a
// closing $ follows a non-space and is not followed by a digit.

// The vendored libraries are imported by a computed path so that tsc (checkJs) does not type
// vendor code that is not ours (tsconfig excludes extension/vendor/); both are `any` here.
const VENDOR = '../vendor/';
/** @type {any} */
const { Marked } = await import(`${VENDOR}marked/marked.esm.js`);
/** @type {any} */
const DOMPurify = (await import(`${VENDOR}dompurify/purify.es.mjs`)).default;
/** @type {any} */
const katex = (await import(`${VENDOR}katex/katex.mjs`)).default;

const SAFE_URL = /^(?:https?:|mailto:)/i;

/** @param {string} s */
const escapeHtml = (s) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** @param {string} href */
const safeHref = (href) => (typeof href === 'string' && SAFE_URL.test(href.trim()) ? href.trim() : null);

// inline: $$…$$ (display, may span lines of one paragraph), \[…\] (display), \(…\), $…$
const INLINE_MATH = [
  { re: /^\$\$(?!\$)([\s\S]+?)\$\$/, display: true },
  { re: /^\\\[([\s\S]+?)\\\]/, display: true },
  { re: /^\\\(([\s\S]+?)\\\)/, display: false },
  { re: /^\$(?=[^\s$])((?:\\.|[^\\$\n`])*?[^\s\\$`])\$(?!\d)/, display: false }, // never across a code span
];
// block: $$ or \[ opening a line, its closing on the same or a later line, ending its line
const BLOCK_MATH = [/^ {0,3}\$\$([\s\S]+?)\$\$[ \t]*(?:\n+|$)/, /^ {0,3}\\\[([\s\S]+?)\\\][ \t]*(?:\n+|$)/];

/** @param {string} tex @param {boolean} display */
const mathHtml = (tex, display) => `<span class="math ${display ? 'math-display' : 'math-inline'}">${escapeHtml(tex.trim())}</span>`;

const MATH_EXTENSIONS = [
  {
    name: 'mathBlock',
    level: 'block',
    /** @param {string} src */
    start(src) {
      const m = /(?:^|\n) {0,3}(?:\$\$|\\\[)/.exec(src);
      return m ? m.index + (m[0].startsWith('\n') ? 1 : 0) : undefined;
    },
    /** @param {string} src */
    tokenizer(src) {
      for (const re of BLOCK_MATH) {
        const m = re.exec(src);
        if (m && m[1].trim()) return { type: 'mathBlock', raw: m[0], tex: m[1] };
      }
      return undefined;
    },
    /** @param {{tex: string}} token */
    renderer(token) {
      return `<p class="math-block">${mathHtml(token.tex, true)}</p>\n`;
    },
  },
  {
    name: 'mathInline',
    level: 'inline',
    /** @param {string} src */
    start(src) {
      const i = src.search(/\$|\\[([]/);
      return i < 0 ? undefined : i;
    },
    /** @param {string} src */
    tokenizer(src) {
      for (const { re, display } of INLINE_MATH) {
        const m = re.exec(src);
        if (m && m[1].trim()) return { type: 'mathInline', raw: m[0], tex: m[1], display };
      }
      return undefined;
    },
    /** @param {{tex: string, display: boolean}} token */
    renderer(token) {
      return mathHtml(token.tex, token.display);
    },
  },
];

const KATEX = { throwOnError: false, errorColor: 'var(--bad)', trust: false, strict: 'ignore', output: 'htmlAndMathml', maxSize: 20, maxExpand: 500 };

/** Each sanitised span.math becomes KaTeX's rendering of its text (the TeX); on failure it stays text. @param {ParentNode} root */
function renderMath(root) {
  for (const span of root.querySelectorAll('span.math')) {
    const tex = span.textContent || '';
    const display = span.classList.contains('math-display');
    try {
      span.textContent = '';
      katex.render(tex, span, { ...KATEX, displayMode: display });
      span.setAttribute('title', tex);
    } catch {
      span.textContent = tex;
      span.classList.add('math-source');
    }
  }
}

const marked = new Marked({
  gfm: true,
  breaks: true, // a typed line break (a user's prompt) stays a line break
  async: false,
  extensions: MATH_EXTENSIONS,
  renderer: {
    /** @param {{text: string}} token raw HTML in the Markdown: shown, never parsed */
    html(token) {
      return escapeHtml(token.text);
    },
    /** @param {{href: string, text: string}} token an image is a link to it, when http(s) */
    image(token) {
      const href = safeHref(token.href);
      const label = escapeHtml(token.text || 'image');
      return href && /^https?:/i.test(href) ? `<a href="${escapeHtml(href)}">${label}</a>` : label;
    },
  },
});

const PURIFY = {
  ALLOWED_TAGS: [
    'a', 'p', 'br', 'hr', 'strong', 'em', 'b', 'i', 'del', 's', 'code', 'pre', 'blockquote',
    'ul', 'ol', 'li', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'h1', 'h2', 'h3', 'h4', 'h5',
    'h6', 'input', 'span', 'sup', 'sub',
  ],
  ALLOWED_ATTR: ['href', 'title', 'align', 'class', 'type', 'checked', 'disabled', 'start'],
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
  ALLOW_DATA_ATTR: false,
  RETURN_DOM_FRAGMENT: true,
};

/**
 * @param {string} code
 * @returns {HTMLButtonElement}
 */
function copyButton(code) {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = 'quiet small copy';
  b.textContent = 'Copy';
  b.title = 'Copy the code';
  b.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(code);
      b.textContent = 'Copied';
    } catch {
      b.textContent = 'Not copied';
    }
  });
  return b;
}

/**
 * Markdown → a sanitised fragment, ready to append.
 * @param {string} md
 * @returns {DocumentFragment}
 */
export function renderMarkdown(md) {
  const html = /** @type {string} */ (marked.parse(typeof md === 'string' ? md : ''));
  const frag = /** @type {DocumentFragment} */ (/** @type {unknown} */ (DOMPurify.sanitize(html, PURIFY)));
  for (const input of frag.querySelectorAll('input')) {
    if (input.getAttribute('type') !== 'checkbox') input.remove();
    else input.setAttribute('disabled', '');
  }
  for (const a of frag.querySelectorAll('a')) {
    const href = safeHref(a.getAttribute('href') || '');
    if (!href) {
      a.replaceWith(document.createTextNode(a.textContent || ''));
      continue;
    }
    a.setAttribute('target', '_blank');
    a.setAttribute('rel', 'noopener noreferrer');
  }
  for (const pre of frag.querySelectorAll('pre')) {
    const code = pre.querySelector('code');
    const text = ((code || pre).textContent || '').replace(/\n$/, '');
    const lang = code && /(?:^|\s)language-(\S+)/.exec(code.className);
    const box = document.createElement('div');
    box.className = 'code-block';
    const head = document.createElement('div');
    head.className = 'code-head';
    const label = document.createElement('span');
    label.className = 'code-lang';
    label.textContent = lang ? lang[1] : '';
    head.append(label, copyButton(text));
    pre.replaceWith(box);
    box.append(head, pre);
  }
  renderMath(frag);
  return frag;
}
