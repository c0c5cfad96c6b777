/* Wherefrom content scripts: DOM queries the readers share (classic script; see files.json).
 *
 * Selectors from the registry (a string or a list), queries that also search open shadow roots
 * in tree order, and whether an element is rendered. No side effects.
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;

  /** @param {WfSelectors | null | undefined} s @returns {string} */
  function asSelector(s) {
    if (!s) return '';
    return Array.isArray(s) ? s.join(', ') : s;
  }

  /**
   * querySelectorAll that, when deep, also searches open shadow roots, in tree order.
   * @param {ParentNode} root @param {string} selector @param {boolean} [deep] @returns {Element[]}
   */
  function queryAll(root, selector, deep) {
    if (!selector) return [];
    if (!deep) return Array.prototype.slice.call(root.querySelectorAll(selector));
    /** @type {Element[]} */
    var out = [];
    (function visit(/** @type {Node} */ r) {
      var walker = document.createTreeWalker(r, NodeFilter.SHOW_ELEMENT);
      var el = /** @type {Element | null} */ (walker.nextNode());
      while (el) {
        if (el.matches(selector)) out.push(el);
        if (el.shadowRoot) visit(el.shadowRoot);
        el = /** @type {Element | null} */ (walker.nextNode());
      }
    })(root);
    return out;
  }

  /** The element itself when it matches, else its matching descendants (open shadow roots too). */
  /** @param {Element} el @param {string} selector @param {boolean} deep @returns {Element[]} */
  function selfOrDescendants(el, selector, deep) {
    if (!selector) return [el];
    if (el.matches(selector)) return [el];
    var root = deep && el.shadowRoot ? el.shadowRoot : el;
    var found = queryAll(root, selector, deep);
    if (deep && el.shadowRoot) found = found.concat(queryAll(el, selector, false));
    return outermost(found);
  }

  /** Keep the outermost elements: a nested one is already part of its ancestor's text. */
  /** @template {Element} E @param {E[]} found @returns {E[]} */
  function outermost(found) {
    return found.filter(function (n) {
      for (var k = 0; k < found.length; k++) {
        if (found[k] !== n && found[k].contains(n)) return false;
      }
      return true;
    });
  }

  /** @param {Element} el @param {string} selector @param {boolean} deep */
  function hasMatch(el, selector, deep) {
    if (!selector) return false;
    if (el.matches(selector)) return true;
    if (el.querySelector(selector)) return true;
    return !!(deep && el.shadowRoot && queryAll(el.shadowRoot, selector, true).length);
  }

  /** Is the element rendered (no hidden ancestor, a box on the page)? */
  /** @param {Element} el */
  function shown(el) {
    if (typeof el.checkVisibility === 'function') return el.checkVisibility({ visibilityProperty: true });
    return el.getClientRects().length > 0;
  }

  ns.dom = Object.freeze({
    asSelector: asSelector,
    queryAll: queryAll,
    selfOrDescendants: selfOrDescendants,
    outermost: outermost,
    hasMatch: hasMatch,
    shown: shown,
  });
})();
