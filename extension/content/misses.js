/* Wherefrom content scripts: no silent partial capture (classic script; see files.json).
 *
 * What a settled capture records when it is not whole: the miss kind, never page text.
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;

  /**
   * A URL path as a pattern with no identifying part: each segment holding a digit or longer
   * than 24 characters becomes `:id` ("/c/6a1f…" -> "/c/:id"). No query, no fragment.
   * @param {string} pathname @returns {string}
   */
  function pathPattern(pathname) {
    return String(pathname).split('/').map(function (seg) {
      if (!seg) return seg;
      return /\d/.test(seg) || seg.length > 24 ? ':id' : seg.slice(0, 24);
    }).join('/') || '/';
  }

  /**
   * The miss a settled capture records, or null: `no_turns` (nothing found), `missing_role`
   * (questions without replies, or the reverse), `empty_turn` (a turn element with no text).
   * A page showing only a report panel is one assistant turn by design, not a missing role.
   * @param {Array<{role: string}>} turns
   * @param {{empty?: Array<{role: string}>, source: string} | null} found
   * @returns {string | null}
   */
  function missKind(turns, found) {
    if (!turns.length) return 'no_turns';
    if (found && found.source === 'panel') return null;
    /** @type {Record<string, boolean>} */
    var roles = {};
    turns.forEach(function (t) { roles[t.role] = true; });
    if (!roles.user || !roles.assistant) return 'missing_role';
    if (found && found.empty && found.empty.length) return 'empty_turn';
    return null;
  }

  ns.misses = Object.freeze({ pathPattern: pathPattern, missKind: missKind });
})();
