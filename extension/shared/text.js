// Character caps: count code points, never split what a reader sees as one character. The same
// rule as server/textcaps.py is_boundary (marks, variation selectors, skin tones, emoji tags,
// zero-width-joiner sequences, flags, conjoining Hangul jamo, CR LF); both run
// fixtures/cap-cases.json.

const MARK = /^[\p{Mn}\p{Me}\p{Mc}]$/u;

/** @param {string} ch */
function extendsPrevious(ch) {
  const cp = /** @type {number} */ (ch.codePointAt(0));
  return (
    MARK.test(ch) ||
    ch === '\u200d' || ch === '\u200c' ||
    (cp >= 0xfe00 && cp <= 0xfe0f) || // variation selectors
    (cp >= 0xe0100 && cp <= 0xe01ef) || // variation selectors supplement
    (cp >= 0x1f3fb && cp <= 0x1f3ff) || // emoji skin-tone modifiers
    (cp >= 0xe0020 && cp <= 0xe007f) // emoji tag sequences (subdivision flags)
  );
}

/** @param {string} ch */
const isRegional = (ch) => {
  const cp = /** @type {number} */ (ch.codePointAt(0));
  return cp >= 0x1f1e6 && cp <= 0x1f1ff;
};

/** @param {string} before @param {string} after */
function hangulJoins(before, after) {
  const b = /** @type {number} */ (before.codePointAt(0)), a = /** @type {number} */ (after.codePointAt(0));
  const lead = b >= 0x1100 && b <= 0x115f, vowel = b >= 0x1160 && b <= 0x11a7, trail = b >= 0x11a8 && b <= 0x11ff;
  const aLead = a >= 0x1100 && a <= 0x115f, aVowel = a >= 0x1160 && a <= 0x11a7, aTrail = a >= 0x11a8 && a <= 0x11ff;
  return (lead && (aLead || aVowel)) || (vowel && (aVowel || aTrail)) || (trail && aTrail);
}

/**
 * May a cut fall between chars[p - 1] and chars[p]? (chars: code points)
 * @param {string[]} chars
 * @param {number} p
 */
export function isBoundary(chars, p) {
  if (p <= 0 || p >= chars.length) return true;
  const before = chars[p - 1], after = chars[p];
  if (before === '\r' && after === '\n') return false;
  if (before === '\u200d' || extendsPrevious(after)) return false;
  if (isRegional(after) && isRegional(before)) {
    let run = 0;
    for (let i = p - 1; i >= 0 && isRegional(chars[i]); i--) run++;
    return run % 2 === 0;
  }
  return !hangulJoins(before, after);
}

/**
 * At most `limit` characters (code points) of `text`, cut on a boundary.
 * @param {string} text
 * @param {number} limit
 * @param {{ellipsis?: boolean}} [opts]
 */
export function capChars(text, limit, opts = {}) {
  const chars = Array.from(text);
  if (chars.length <= limit) return text;
  const ellipsis = Boolean(opts.ellipsis) && limit > 0;
  let cut = ellipsis ? limit - 1 : limit;
  while (cut > 0 && !isBoundary(chars, cut)) cut -= 1;
  return chars.slice(0, cut).join('') + (ellipsis ? '…' : '');
}

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * The fence (``` or ~~~ run) a Markdown text leaves open at its end, or null
 * (server/textcaps.py open_fence).
 * @param {string} markdown
 * @returns {string | null}
 */
export function openFence(markdown) {
  /** @type {string | null} */
  let fence = null;
  for (const line of markdown.split('\n')) {
    const m = FENCE_LINE.exec(line);
    if (!m) continue;
    const run = m[1];
    if (fence === null) fence = run;
    else if (run[0] === fence[0] && run.length >= fence.length && !line.trim().slice(run.length).trim()) fence = null;
  }
  return fence;
}

/**
 * At most `limit` characters of Markdown, cut by capChars; a cut inside a code fence closes it
 * (server/textcaps.py cap_markdown; both run fixtures/markdown-cap-cases.json).
 * @param {string} markdown
 * @param {number} limit
 */
export function capMarkdown(markdown, limit) {
  if (Array.from(markdown).length <= limit) return markdown;
  const cut = capChars(markdown, limit);
  let fence = openFence(cut);
  if (fence === null) return cut;
  const head = capChars(markdown, Math.max(0, limit - fence.length - 1));
  fence = openFence(head);
  if (fence === null) return head;
  return head + (head.endsWith('\n') ? '' : '\n') + fence;
}

/**
 * A saved page's Markdown under a title heading of its own: its first heading (# or ##) dropped
 * when it is that title, so the title is said once. The same rule as server/dataio/markdown.py
 * without_title, on the shared fixtures/title-heading-cases.json.
 * @param {string} markdown @param {string | null | undefined} title @returns {string}
 */
export function withoutTitle(markdown, title) {
  const body = markdown.trim();
  const cut = body.indexOf('\n');
  const first = cut < 0 ? body : body.slice(0, cut);
  const heading = /^#{1,2}\s+(.*?)\s*#*$/.exec(first);
  const norm = (/** @type {string} */ s) => s.split(/\s+/).filter(Boolean).join(' ').toLowerCase();
  if (heading && title && norm(heading[1]) === norm(title)) return (cut < 0 ? '' : body.slice(cut + 1)).trim();
  return body;
}
