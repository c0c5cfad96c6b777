/* Wherefrom content scripts: what in a turn is not message text, for the generic reader (classic script).
 *
 * The generic reader (content/generic.js) knows no site, so it cannot name a site's chrome by
 * class. What a reader does not see as the message, by structure alone:
 *   - controls, menus, navigation, forms, live-region announcements (role="status"), dividers
 *     (role="separator": a date between turns);
 *   - a formula's accessible copy: a <math> beside its drawn rendering (aria-hidden), so the
 *     formula is read once;
 *   - a citation chip: a link opening a preview card (a popover trigger holding the link);
 *   - a code block's header: the short words (its language, "Copy") before the code, in a box
 *     holding only that one code block;
 *   - a message's action bar: short text (a time stamp) in the nearest box around its controls;
 *   - short lines beside the box holding nearly all of a message (a reasoning time, initials).
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;
  var V = ns.visible;

  // a column header's sort control holds the header's text; a span acting as a button inside a
  // sentence (a link opening a preview) is part of the sentence
  var CHROME = 'button:not(th button, [role="columnheader"] button), [role="button"]:not(p [role="button"], li [role="button"]), a[type="button"], [role="toolbar"], [role="menu"], [role="menubar"], [role="tooltip"], ' +
    '[role="navigation"], [role="status"], [role="separator"], nav, aside, header, footer, form, textarea, input, select, ' +
    '[contenteditable="true"], [contenteditable=""], ' +
    'math:has(+ [aria-hidden="true"]), :has(> math):has(+ [aria-hidden="true"]), ' +
    '[data-state]:has(> * > a[target="_blank"])';
  var PROSE = 'p, li, h1, h2, h3, h4, h5, h6, table, blockquote';
  // where a code block's code is: a <pre>, an editor's text box, a block <code> outside prose
  var CODE = 'pre, [role="code"], [role="textbox"][aria-multiline="true"], code';
  var HEADER_WORDS = 24;
  var BESIDE = 40;
  // a time or date beside a message's controls ("16:49", "Jan 29", "2025/12/16")
  var STAMP = /^[^\s]*\d[\d\s:./\-]*[^\s]*$|^\S+ \d{1,2}$|^\d{1,2} \S+$/;

  /**
   * The elements of a code block's header in row: the elements holding short text before a
   * <pre>, inside the largest box that holds only that code block and no prose.
   * @param {Element} row @returns {Element[]}
   */
  function codeHeaders(row) {
    /** @type {Element[]} */
    var out = [];
    var pres = innermost(row);
    for (var i = 0; i < pres.length; i++) {
      var pre = pres[i];
      /** @type {Element | null} */
      var box = null;
      for (var b = pre.parentElement; b && b !== row && row.contains(b); b = b.parentElement) {
        if (innermost(b).length > 1 || b.querySelector(PROSE)) break;
        box = b;
      }
      if (!box) continue;
      var walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
      for (var t = walker.nextNode(); t; t = walker.nextNode()) {
        if (pre.contains(t)) break;
        var s = V.normalise(t.nodeValue || '');
        var holder = t.parentElement;
        if (s && s.length <= HEADER_WORDS && holder && out.indexOf(holder) < 0) out.push(holder);
      }
    }
    return out;
  }

  /** @param {Element} el @returns {Element[]} the code holders in el holding no other (the code itself) */
  function innermost(el) {
    return Array.prototype.filter.call(el.querySelectorAll(CODE), function (/** @type {Element} */ x) {
      return !x.querySelector(CODE) && !(x.localName === 'code' && x.parentElement && x.parentElement.closest(PROSE));
    });
  }

  /** @param {Node} n @returns {number} characters of text outside controls and drawings */
  function ownText(n) {
    if (n.nodeType === 3) return V.normalise(/** @type {Text} */ (n).data).length;
    if (n.nodeType !== 1) return 0;
    var el = /** @type {Element} */ (n);
    if (el.matches('button, [role="button"], svg, script, style, template') || el.hasAttribute('hidden')) return 0;
    var k = 0;
    for (var c = el.firstChild; c; c = c.nextSibling) k += ownText(c);
    return k;
  }

  /**
   * A message's action bar: the nearest box around a control that holds text outside the
   * controls, when that text is short (a time stamp, "Edited"), no prose, and much less than the
   * row's without its speaker labels (never the message itself, however short).
   * @param {Element} row @param {Set<Element>} labels @returns {Element[]}
   */
  function actionBars(row, labels) {
    /** @type {Element[]} */
    var out = [];
    var whole = ownText(row);
    labels.forEach(function (l) { if (row.contains(l)) whole -= ownText(l); });
    var controls = row.querySelectorAll('button, [role="button"]');
    for (var i = 0; i < controls.length; i++) {
      for (var b = controls[i].parentElement; b && b !== row && row.contains(b); b = b.parentElement) {
        var n = ownText(b);
        if (!n) continue;
        if (n <= HEADER_WORDS && (n * 2 < whole || STAMP.test(V.normalise(b.textContent || ''))) && !b.querySelector(PROSE + ', pre') && !b.closest(PROSE + ', th, td') && out.indexOf(b) < 0) out.push(b);
        break;
      }
    }
    return out;
  }

  /**
   * Short lines beside a message's body ("Thought for 37 seconds", an avatar's initials, a
   * counter): from the row down, while one box holds nearly all the text and its siblings are
   * short boxes, never prose, those siblings are left out.
   * @param {Element} row @returns {Element[]}
   */
  function besideBody(row) {
    /** @type {Element[]} */
    var out = [];
    for (var x = row, n = 0; n < 40; n++) {
      var total = ownText(x);
      var kids = Array.prototype.filter.call(x.children, function (/** @type {Element} */ c) { return ownText(c) > 0; });
      if (kids.length === 0) break;
      if (kids.length === 1) { x = kids[0]; continue; }
      if (kids.some(function (/** @type {Element} */ c) { return c.matches(PROSE + ', pre, ul, ol, span, a, strong, em, b, i, code'); })) break;
      var big = kids.filter(function (/** @type {Element} */ c) { return ownText(c) >= 0.9 * total; })[0];
      if (!big || kids.some(function (/** @type {Element} */ c) { return c !== big && ownText(c) > BESIDE; })) break;
      kids.forEach(function (/** @type {Element} */ c) { if (c !== big) out.push(c); });
      x = big;
    }
    return out;
  }

  /**
   * Everything in row left out of its message beside the CHROME selector.
   * @param {Element} row @param {Set<Element>} labels the speaker labels found @returns {Element[]}
   */
  function skipped(row, labels) {
    return codeHeaders(row).concat(actionBars(row, labels), besideBody(row));
  }

  ns.genericChrome = Object.freeze({ CHROME: CHROME, skipped: skipped });
})();
