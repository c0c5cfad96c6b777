// Character caps: count code points, never split one. The same rule as server/textcaps.py
// (a cut never separates marks from their base nor ends on a zero-width joiner); both run
// fixtures/cap-cases.json.

const MARK = /^\p{M}$/u;
const ZWJ = '\u200d';

/**
 * At most `limit` characters (code points) of `text`.
 * @param {string} text
 * @param {number} limit
 * @param {{ellipsis?: boolean}} [opts]
 */
export function capChars(text, limit, opts = {}) {
  const chars = Array.from(text);
  if (chars.length <= limit) return text;
  const ellipsis = Boolean(opts.ellipsis) && limit > 0;
  let cut = ellipsis ? limit - 1 : limit;
  while (cut > 0 && (MARK.test(chars[cut]) || chars[cut] === ZWJ || chars[cut - 1] === ZWJ)) cut -= 1;
  return chars.slice(0, cut).join('') + (ellipsis ? '…' : '');
}
