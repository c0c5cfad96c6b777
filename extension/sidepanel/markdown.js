// Render stored Markdown (a captured turn, a note) for the panel: marked (GFM) → DOMPurify → a
// DocumentFragment. Nothing that came from a page runs here:
//   - raw HTML inside the Markdown is never HTML: marked's `html` tokens are rendered as text;
//   - DOMPurify keeps only the tags Markdown produces (no img, no script, no style, no form),
//     only href/title/align/class attributes, and only http(s)/mailto links;
//   - images become links (never loaded: the panel fetches nothing from a page's hosts);
//   - links open in a new tab without a referrer; a `javascript:` link is text.
// Code blocks are <pre><code> with a Copy button. Math stays its TeX source, as text.

// The vendored libraries are imported by a computed path so that tsc (checkJs) does not type
// vendor code that is not ours (tsconfig excludes extension/vendor/); both are `any` here.
const VENDOR = '../vendor/';
/** @type {any} */
const { Marked } = await import(`${VENDOR}marked/marked.esm.js`);
/** @type {any} */
const DOMPurify = (await import(`${VENDOR}dompurify/purify.es.mjs`)).default;

const SAFE_URL = /^(?:https?:|mailto:)/i;

/** @param {string} s */
const escapeHtml = (s) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** @param {string} href */
const safeHref = (href) => (typeof href === 'string' && SAFE_URL.test(href.trim()) ? href.trim() : null);

const marked = new Marked({
  gfm: true,
  breaks: true, // a typed line break (a user's prompt) stays a line break
  async: false,
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
  return frag;
}
