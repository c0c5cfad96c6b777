/* Wherefrom content scripts: a registry layout's turn elements and their roles (classic script).
 *
 * A layout names either one turn selector with a role rule (`turn` + `role`) or one selector per
 * role (`user`, `assistant`); this file finds those elements in tree order (open shadow roots
 * too), with the exclusion selector, native id and streaming signal of the layout.
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;
  var D = ns.dom;

  var DEFAULT_EXCLUDE = ['script', 'style', 'template', 'noscript'];

  /**
   * The combined exclusion selector for a site + layout (registry defaults first).
   * @param {WfSite} site @param {WfLayoutPart | null} [layout] @returns {string}
   */
  function excludeFor(site, layout) {
    var reg = /** @type {Partial<WfRegistry>} */ (ns.registry || {});
    var list = DEFAULT_EXCLUDE.concat((reg.defaults && reg.defaults.exclude) || [],
      site.exclude || [], (layout && layout.exclude) || []);
    return list.join(', ');
  }

  /** @param {WfLayoutPart} layout @param {WfRole} role @returns {string} */
  function textSelector(layout, role) {
    var t = layout.text;
    if (!t) return '';
    if (typeof t === 'string' || Array.isArray(t)) return D.asSelector(t);
    return D.asSelector(t[role]);
  }

  /**
   * Elements of one layout that are turns, in document order, each with its role.
   * @param {ParentNode} root @param {WfSite} site @param {WfLayoutPart} layout @returns {WfTurnElement[]}
   */
  function turnElements(root, site, layout) {
    var deep = !!site.shadow;
    if (layout.turn) {
      var roles = layout.role || {};
      return D.queryAll(root, D.asSelector(layout.turn), deep).map(function (el) {
        /** @type {string | null} */
        var role = null;
        if (roles.attr) {
          var v = el.getAttribute(roles.attr);
          role = roles.values ? roles.values[/** @type {string} */ (v)] || null : v;
        } else if (roles.user && D.hasMatch(el, D.asSelector(roles.user), deep)) role = 'user';
        else if (roles.assistant && D.hasMatch(el, D.asSelector(roles.assistant), deep)) role = 'assistant';
        else role = roles['default'] || null;
        return { el: el, role: role };
      }).filter(/** @param {{el: Element, role: string | null}} t @returns {t is WfTurnElement} */ function (t) {
        return t.role === 'user' || t.role === 'assistant';
      });
    }
    var userSel = D.asSelector(layout.user), assistantSel = D.asSelector(layout.assistant);
    // one query for both roles keeps tree order (also across shadow roots)
    /** @type {WfTurnElement[]} */
    var all = D.queryAll(root, userSel + ', ' + assistantSel, deep).map(function (el) {
      return { el: el, role: el.matches(userSel) ? 'user' : 'assistant' };
    });
    all = all.filter(function (t) {  // a match nested in another turn is part of that turn
      for (var k = 0; k < all.length; k++) {
        if (all[k].el !== t.el && all[k].el.contains(t.el)) return false;
      }
      return true;
    });
    return all;
  }

  /**
   * Turn elements in reading order (`reverse`: the list is newest first in the DOM).
   * @param {ParentNode} root @param {WfSite} site @param {WfLayoutPart} layout
   */
  function orderedTurnElements(root, site, layout) {
    var list = turnElements(root, site, layout);
    return layout.reverse ? list.reverse() : list;
  }

  /**
   * How many elements a layout's turn selector(s) match now (the registry's evidence count).
   * @param {ParentNode} root @param {WfSite} site @param {WfLayoutPart} layout
   */
  function countMatches(root, site, layout) {
    return turnElements(root, site, layout).length;
  }

  /** @param {Element} el @param {WfNativeIdSpec | undefined} spec @returns {string | null} */
  function nativeId(el, spec) {
    if (!spec) return null;
    /** @type {Element | null} */
    var holder = el;
    if (spec.closest) holder = el.closest(spec.closest) || el.querySelector(spec.closest);
    if (!holder) return null;
    var v = holder.getAttribute(spec.attr);
    return v ? v : null;
  }

  /**
   * @param {ParentNode} root @param {Element | null} el @param {WfStreamingSpec | undefined} spec
   * @param {boolean} deep
   */
  function isStreaming(root, el, spec, deep) {
    if (!spec) return false;
    if (spec.selector && D.queryAll(root, D.asSelector(spec.selector), deep).length) return true;
    if (spec.attr && el) {
      var holder = el.hasAttribute(spec.attr) ? el : el.closest('[' + spec.attr + ']') || el.querySelector('[' + spec.attr + ']');
      if (holder && holder.getAttribute(spec.attr) === String(spec.value)) return true;
    }
    return false;
  }

  ns.layouts = Object.freeze({
    excludeFor: excludeFor,
    textSelector: textSelector,
    turnElements: turnElements,
    orderedTurnElements: orderedTurnElements,
    countMatches: countMatches,
    nativeId: nativeId,
    isStreaming: isStreaming,
  });
})();
