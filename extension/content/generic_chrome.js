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
 *   - short lines beside the box holding nearly all of a message (a reasoning time, initials);
 *   - a span acting as a button on its own (a "Show more" toggle); amid a sentence's text it is
 *     part of the sentence (a prompt's link drawn as a clickable span);
 *   - a short note right after a rendered answer's prose ("Prepared using <model>");
 *   - an editor's line-number gutter (1..n in a box of its own beside the code's lines);
 *   - a card a control covers (an attachment tile: its text starts with the control's name);
 *   - a short notice after a message's action bar (the bar closes the message);
 *   - citation markers in a sentence (a link reading "3", a chip reading "source +1");
 *   - a list of sources (three or more entries, each all one link opening elsewhere);
 *   - a collapsed panel (aria-hidden, drawn with no height or transparent: a closed thinking panel).
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;
  var V = ns.visible;

  // a column header's sort control holds the header's text; a span acting as a button inside a
  // sentence (a link opening a preview) is part of the sentence
  var CHROME = 'button:not(th button, [role="columnheader"] button), [role="button"]:not(p [role="button"], li [role="button"], span), a[type="button"], [role="toolbar"], [role="menu"], [role="menubar"], [role="tooltip"], ' +
    '[role="navigation"], [role="status"], [role="separator"], nav, aside, header, footer, form, textarea, input, select, ' +
    '[contenteditable="true"], [contenteditable=""], ' +
    'math:has(+ [aria-hidden="true"]), :has(> math):has(+ [aria-hidden="true"]), ' +
    '[data-state]:has(> * > a[target="_blank"])';
  var PROSE = 'p, li, h1, h2, h3, h4, h5, h6, table, blockquote';
  // where a code block's code is: a <pre>, an editor's text box, a block <code> outside prose
  var CODE = 'pre, [role="code"], [role="textbox"][aria-multiline="true"], code';
  var HEADER_WORDS = 24;
  var BESIDE = 60;
  var NOTE = 60;
  var NOTICE = 120;
  var CITE_NUMBER = /^[[(]?-?\s?\d{1,3}[\])]?$/;
  // a formula's drawing is never a citation ("a+1")
  var FORMULA = 'math, [aria-hidden="true"]';
  var CITE_CHIP = /^\S{1,30}\s?\+\d{1,2}$/;
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

  /**
   * An editor's line-number gutter in a code block: elements holding only 1, 2, … n in order, in
   * a box holding nothing else, beside the code's lines (a code block printing numbers holds them
   * among its lines, not in a box of their own).
   * @param {Element} row @returns {Element[]}
   */
  function lineNumbers(row) {
    /** @type {Element[]} */
    var out = [];
    innermost(row).forEach(function (code) {
      /** @type {Element[]} */
      var nums = [];
      var walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
      for (var t = walker.nextNode(); t; t = walker.nextNode()) {
        var s = V.normalise(t.nodeValue || '');
        if (/^\d+$/.test(s) && t.parentElement) nums.push(t.parentElement);
      }
      if (nums.length < 2 || nums.some(function (n, i) { return V.normalise(n.textContent || '') !== String(i + 1); })) return;
      var box = nums[0];
      while (box !== code && !nums.every(function (n) { return box.contains(n); })) box = /** @type {Element} */ (box.parentElement);
      var digits = nums.reduce(function (k, n) { return k + ownText(n); }, 0);
      if (box !== code && ownText(box) === digits && ownText(code) > digits) out.push(box);
    });
    return out;
  }

  /** @param {Element} el @returns {Element[]} the code holders in el holding no other (the code itself) */
  function innermost(el) {
    // an editor's empty input box (a textarea under its drawn lines) holds no code
    var all = Array.prototype.filter.call(el.querySelectorAll(CODE), function (/** @type {Element} */ x) { return !!V.normalise(x.textContent || ''); });
    return all.filter(function (/** @type {Element} */ x) {
      return !all.some(function (/** @type {Element} */ y) { return y !== x && x.contains(y); }) &&
        !(x.localName === 'code' && x.parentElement && x.parentElement.closest(PROSE));
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
   * Inline controls (a span acting as a button) that are not part of a sentence: a span with a
   * button role is a control unless text runs on either side of it in its parent (a prompt's link
   * shown as a clickable span).
   * @param {Element} row @returns {Element[]}
   */
  function inlineControls(row) {
    return Array.prototype.filter.call(row.querySelectorAll('span[role="button"]'), function (/** @type {Element} */ el) {
      return !amidText(el) && !el.closest('p, li');
    });
  }

  /** @param {Element} el @returns {boolean} does text of its parent's own run beside el? */
  function amidText(el) {
    var sides = [el.previousSibling, el.nextSibling];
    return sides.some(function (n) { return !!n && n.nodeType === 3 && V.normalise(/** @type {Text} */ (n).data) !== ''; });
  }

  /**
   * A note under a rendered answer ("Prepared using <model>", "Prepared by Deep Research"): the
   * row's last text, short, outside prose, in the largest box holding only it, right after a box
   * holding the answer's prose (paragraphs, lists, tables). A plain message has no prose before it.
   * @param {Element} row @returns {Element[]}
   */
  function trailingNote(row) {
    /** @type {Text | null} */
    var last = null;
    var walker = document.createTreeWalker(row, NodeFilter.SHOW_TEXT);
    for (var t = walker.nextNode(); t; t = walker.nextNode()) {
      var h = t.parentElement;
      if (V.normalise(t.nodeValue || '') && h && !h.closest('button, [role="button"], [hidden], script, style, template')) last = /** @type {Text} */ (t);
    }
    var leaf = last && last.parentElement;
    if (!leaf || leaf.closest(PROSE + ', pre, code, math, [aria-hidden="true"]')) return [];
    var size = ownText(leaf);
    var box = leaf;
    while (box.parentElement && box.parentElement !== row && ownText(box.parentElement) === size) box = box.parentElement;
    var before = box.previousElementSibling;
    while (before && !ownText(before)) before = before.previousElementSibling;
    if (size > NOTE || box.querySelector(PROSE + ', pre, math') || !before || !before.querySelector(PROSE)) return [];
    return [box];
  }

  /**
   * A card that is a control (an attachment tile, a link preview): a box whose text starts with
   * the name of an unlabelled-by-text control inside it (`aria-label` = the file's name) and holds
   * little more (the file's type). The card is what the control opens, not message text.
   * @param {Element} row @returns {Element[]}
   */
  function controlCards(row) {
    /** @type {Element[]} */
    var out = [];
    var controls = row.querySelectorAll('button[aria-label], [role="button"][aria-label]');
    for (var i = 0; i < controls.length; i++) {
      var name = V.normalise(controls[i].getAttribute('aria-label') || '');
      if (name.length < 3 || ownText(controls[i])) continue;
      for (var b = controls[i].parentElement; b && b !== row && row.contains(b); b = b.parentElement) {
        var n = ownText(b);
        if (!n) continue;
        if (V.normalise(b.textContent || '').indexOf(name) === 0 && n <= name.length + HEADER_WORDS && out.indexOf(b) < 0) out.push(b);
        break;
      }
    }
    return out;
  }

  /**
   * A notice under a message's action bar ("To run code, enable …"): the action bar (the last
   * box of two or more controls and no text of its own, no code) closes the message; short text
   * after it, much less than the text before it, is the product's, not the message.
   * @param {Element} row @returns {Element[]}
   */
  function afterActions(row) {
    var controls = row.querySelectorAll('button, [role="button"]');
    /** @type {Element | null} */
    var bar = null;
    for (var i = controls.length - 1; i >= 0 && !bar; i--) {
      if (controls[i].closest(PROSE + ', pre')) continue;
      for (var b = controls[i].parentElement; b && b !== row && row.contains(b); b = b.parentElement) {
        if (ownText(b) || b.querySelector('pre, code')) break;
        if (b.querySelectorAll('button, [role="button"]').length >= 2) { bar = b; break; }
      }
    }
    if (!bar) return [];
    /** @type {Element[]} */
    var after = [];
    for (var x = bar; x && x !== row; x = /** @type {Element} */ (x.parentElement)) {
      for (var sib = x.nextElementSibling; sib; sib = sib.nextElementSibling) if (ownText(sib)) after.push(sib);
    }
    var n = after.reduce(function (k, e) { return k + ownText(e); }, 0);
    return n && n <= NOTICE && n * 2 < ownText(row) - n ? after : [];
  }

  /**
   * Citation markers inside a body's sentences: a link whose text is a number ("3", "[3]", "-3"
   * with its dash hidden) or a chip naming a source with a count ("perplexity +1"), the outermost
   * element holding just that text.
   * @param {Element} row @returns {Element[]}
   */
  function citations(row) {
    /** @type {Element[]} */
    var out = [];
    var all = row.querySelectorAll(PROSE.split(', ').map(function (p) { return p + ' *'; }).join(', '));
    for (var i = 0; i < all.length; i++) {
      var el = all[i];
      if (el.matches(PROSE) || out.some(function (o) { return o.contains(el); })) continue;
      var t = V.normalise(el.textContent || '');
      var up = el.parentElement;
      if (!t || !up || V.normalise(up.textContent || '') === t || el.closest(FORMULA) || el.querySelector(FORMULA)) continue;
      if (CITE_NUMBER.test(t) ? !!el.closest('a[href]') : CITE_CHIP.test(t) && el.children.length > 0) out.push(el.closest('a[href]') || el);
    }
    return out;
  }

  /**
   * A list of sources: a box of three or more entries outside prose, each entry's text all in one
   * link opening elsewhere (a domain and a page title), the box holding nothing else.
   * @param {Element} row @returns {Element[]}
   */
  function linkLists(row) {
    /** @type {Element[]} */
    var out = [];
    var all = row.querySelectorAll('*');
    for (var i = 0; i < all.length; i++) {
      var box = all[i];
      if (box.children.length < 3 || box.closest(PROSE) || out.some(function (o) { return o.contains(box); })) continue;
      var items = Array.prototype.filter.call(box.children, function (/** @type {Element} */ c) { return ownText(c) > 0; });
      if (items.length >= 3 && items.length === box.children.length && items.every(function (/** @type {Element} */ c) {
        var links = c.matches('a[href]') ? [c] : c.querySelectorAll('a[href]');
        return links.length === 1 && links[0].getAttribute('target') === '_blank' && ownText(links[0]) === ownText(c);
      })) out.push(box);
    }
    return out;
  }

  /**
   * A collapsed panel (a closed thinking panel, a folded source list): hidden from assistive
   * technology and drawn with no height or fully transparent, so no reader sees it.
   * @param {Element} row @returns {Element[]}
   */
  function collapsed(row) {
    return Array.prototype.filter.call(row.querySelectorAll('[aria-hidden="true"]'), function (/** @type {Element} */ el) {
      return !!V.normalise(el.textContent || '') && (el.getBoundingClientRect().height === 0 || getComputedStyle(el).opacity === '0');
    });
  }

  /**
   * Everything in row left out of its message beside the CHROME selector.
   * @param {Element} row @param {Set<Element>} labels the speaker labels found @returns {Element[]}
   */
  function skipped(row, labels) {
    return codeHeaders(row).concat(actionBars(row, labels), besideBody(row), inlineControls(row), trailingNote(row), lineNumbers(row), controlCards(row), afterActions(row), citations(row), linkLists(row), collapsed(row));
  }

  ns.genericChrome = Object.freeze({ CHROME: CHROME, skipped: skipped });
})();
