// Rewrite the link targets of Markdown written by content/markdown.js (`[text](url)`,
// `[text](url "title")`), leaving code untouched: fenced blocks and inline code spans are copied
// byte for byte. Used by the background to drop tracking parameters (shared/urls.js dropTracking).

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const LINK = /(\]\()((?:\\.|[^()\s\\])+)((?:\s+"[^"]*")?\))/g;

/**
 * @param {string} markdown
 * @param {(url: string) => string} fn applied to each link URL (backslash escapes removed, then re-added)
 * @returns {string}
 */
export function mapMarkdownLinks(markdown, fn) {
  /** @type {string | null} */
  let fence = null;
  return markdown.split('\n').map((line) => {
    const m = FENCE.exec(line);
    if (fence !== null) {
      if (m && m[1][0] === fence[0] && m[1].length >= fence.length && !line.trim().slice(m[1].length).trim()) fence = null;
      return line;
    }
    if (m) { fence = m[1]; return line; }
    // outside code spans only
    return line.split(/(`+[^`]*`+)/).map((part, i) => (i % 2 ? part : part.replace(LINK, (all, open, url, close) => {
      const raw = url.replace(/\\([()\\])/g, '$1');
      return open + fn(raw).replace(/([()])/g, '\\$1') + close;
    }))).join('');
  }).join('\n');
}
