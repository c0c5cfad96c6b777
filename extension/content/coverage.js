/* Wherefrom content scripts: no lost text (classic script; see files.json).
 *
 * A settled capture can have every turn and still miss what no layout knows: a canvas or inline
 * document beside a message, a report panel, tool output. So the turns' text is compared with
 * the text a reader sees in the conversation region — the nearest container of the captured
 * turn elements, without the sidebar, composer and chrome (buttons, menus, navigation, forms,
 * the site's registry `exclude`). When the turns cover less than LOST_TEXT_BELOW of it, the
 * capture records a `lost_text` miss with the share. Where the page states its own message count
 * (ARIA `aria-setsize` on the messages), fewer captured turns record `short_of_site_count`.
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;
  var V = ns.visible;

  // Measured on the saved real pages (bench/generic_reader.py prints each page's share): every
  // complete capture covers at least 0.77 of its region (the lowest, a Perplexity thread's source
  // cards), so 0.6 leaves a margin; a capture missing a document or a reply covers far less.
  var LOST_TEXT_BELOW = 0.6;
  var CHROME = 'button, [role="button"], [role="toolbar"], [role="menu"], [role="menubar"], [role="tooltip"], ' +
    '[role="navigation"], [role="status"], nav, aside, header, footer, form, textarea, input, select, ' +
    '[contenteditable="true"], [contenteditable=""]';

  /** @param {string} s @returns {number} characters that are not whitespace */
  function size(s) { return s.replace(/\s+/g, '').length; }

  /**
   * How much of the conversation region's visible text the captured turns hold, or null when the
   * turns were not read from the page's DOM (page data) or the region holds no text.
   * @param {ParentNode} root @param {WfSite} site @param {WfFound} found @param {Array<{text: string}>} turns
   * @returns {WfCoverage | null}
   */
  function covered(root, site, found, turns) {
    if (found.source === 'page-data' || found.source === 'panel') return null;
    var els = /** @type {Element[]} */ (found.turns.map(function (t) { return t.el; }).filter(Boolean));
    if (!els.length) return null;
    // the generic reader's thread is the container it chose, with every child it did not read as
    // a turn (a document or report beside the rows, rows it could not place) as lost text
    var box = found.source === 'generic' && found.turns.box ? found.turns.box : ns.generic.region(root, found.turns);
    if (box && els.length === 1 && box === els[0]) box = box.parentElement;
    if (!box) return null;
    var exclude = ns.layouts.excludeFor(site, found.layout) + ', ' + (found.source === 'generic' ? ns.genericChrome.CHROME : CHROME);
    var region = size(V.visibleText(box, exclude));
    if (!region) return null;
    var held = turns.reduce(function (n, t) { return n + size(t.text); }, 0);
    return { share: Math.min(1, held / region), region: region, turns: held };
  }

  /**
   * The message count the page states, or null: the largest `aria-setsize` of an element that
   * holds a message (role article / listitem / row, or an element with aria-posinset).
   * @param {ParentNode} root @param {WfSite} site @returns {number | null}
   */
  function siteCount(root, site) {
    var best = 0;
    ns.dom.queryAll(root, '[aria-setsize][aria-posinset]', !!site.shadow).forEach(function (el) {
      var n = parseInt(el.getAttribute('aria-setsize') || '', 10);
      if (n > best && n < 100000) best = n;
    });
    return best || null;
  }

  /**
   * The one miss a settled capture records, with its detail (never page text), or null: the
   * miss kinds of misses.js first, then lost_text, short_of_site_count, and generic_reader (the
   * turns were read by the generic reader: Activity shows it).
   * @param {ParentNode} root @param {WfSite} site @param {WfFound} found
   * @param {Array<{role: string, text: string}>} turns @param {{generic?: boolean}} [opts]
   * @returns {{kind: string, detail: string} | null}
   */
  function settledMiss(root, site, found, turns, opts) {
    var layout = found.layout ? found.layout.id : '?';
    var kind = ns.misses.missKind(turns, { source: found.source, empty: found.empty });
    if (kind === 'no_turns') return { kind: kind, detail: 'no layout matched (' + (found.tried || []).join(', ') + ')' };
    if (kind === 'missing_role') return { kind: kind, detail: 'turns of one role only (layout ' + layout + ')' };
    if (kind) return { kind: kind, detail: 'a turn with no visible text (layout ' + layout + ')' };
    var cov = covered(root, site, found, turns);
    if (cov && cov.share < LOST_TEXT_BELOW) {
      return { kind: 'lost_text', detail: 'the turns hold ' + Math.round(cov.share * 100) + '% of the conversation\'s visible text (layout ' + layout + ')' };
    }
    var count = siteCount(root, site);
    if (count && turns.length < count) {
      return { kind: 'short_of_site_count', detail: turns.length + ' turns captured, the page counts ' + count };
    }
    if (found.source === 'generic') {
      return { kind: 'generic_reader', detail: 'read by the generic reader (' + (opts && opts.generic ? 'captureMode generic' : 'no registry layout found both sides') + ')' };
    }
    return null;
  }

  ns.coverage = Object.freeze({ covered: covered, siteCount: siteCount, settledMiss: settledMiss, LOST_TEXT_BELOW: LOST_TEXT_BELOW });
})();
