/* Wherefrom content scripts: the text a reader sees (classic script; see files.json).
 *
 * One walk of the live DOM (open shadow roots and slots included) that never changes it; the
 * Markdown sink (content/markdown.js) sees the same walk, so both hold the same content.
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;

  var SKIP_TAGS = /^(SCRIPT|STYLE|TEMPLATE|NOSCRIPT|svg|SVG|IMG|VIDEO|AUDIO|CANVAS|IFRAME|INPUT|SELECT|TEXTAREA|OBJECT)$/;
  /** @type {Record<string, number>} */
  var INLINE = { inline: 1, 'inline-block': 1, 'inline-flex': 1, 'inline-grid': 1, contents: 1, ruby: 1, 'ruby-text': 1 };
  var INVISIBLE_CHARS = /[\u200B-\u200D\u2060\uFEFF]/g;

  /** @param {string} text @returns {string} */
  function normalise(text) {
    return String(text).replace(INVISIBLE_CHARS, '').replace(/\s+/g, ' ').trim();
  }

  /** Is this element hidden by its own attribute or style (not by an ancestor)? */
  /** @param {Element} node @param {CSSStyleDeclaration} cs */
  function hiddenBox(node, cs) {
    return node.hasAttribute('hidden') || cs.display === 'none' || cs.visibility === 'hidden' ||
      cs.visibility === 'collapse';
  }

  /**
   * The text a reader sees in root: excluded subtrees (exclude selector) and hidden ones
   * (display:none, visibility:hidden, the hidden attribute) removed, a space at every
   * block boundary and <br>, whitespace collapsed. It walks the live DOM (open shadow roots and
   * their slots included) and never changes it.
   *
   * `sink` (optional, content/markdown.js) sees the same walk — every visible text node, <br>,
   * element entered and left, and each skipped media element — so the Markdown built from it
   * holds exactly what the text holds. `skip` (optional) names elements left out as well (the
   * generic reader's speaker labels, which no selector names).
   * @param {Node} root @param {string} [exclude] @param {WfSink | null} [sink]
   * @param {Set<Element> | null} [skip] @returns {string}
   */
  function visibleText(root, exclude, sink, skip) {
    /** @type {string[]} */
    var parts = [];
    /** @param {Element} node */
    function walkChildren(node) {
      var kids = node.shadowRoot ? node.shadowRoot.childNodes : node.childNodes;
      for (var i = 0; i < kids.length; i++) walk(kids[i]);
    }
    /** @param {Node} n */
    function walk(n) {
      if (n.nodeType === 3) { var data = /** @type {Text} */ (n).data; parts.push(data); if (sink) sink.text(data); return; }
      if (n.nodeType !== 1) return;
      var node = /** @type {Element} */ (n);
      if (SKIP_TAGS.test(node.nodeName)) { if (sink && !(exclude && node.matches(exclude))) sink.media(node); return; }
      if (node.nodeName === 'BR') { parts.push(' '); if (sink) sink.br(); return; }
      if (exclude && node.matches(exclude)) return;
      if (skip && skip.has(node)) return;
      var cs = getComputedStyle(node);
      if (hiddenBox(node, cs)) return;
      var block = !INLINE[cs.display];
      if (block) parts.push(' ');
      if (sink) sink.open(node, cs, block);
      if (node.nodeName === 'SLOT') {
        var assigned = /** @type {HTMLSlotElement} */ (node).assignedNodes({ flatten: true });
        if (assigned.length) assigned.forEach(walk); else walkChildren(node);
      } else {
        walkChildren(node);
      }
      if (sink) sink.close(node);
      if (block) parts.push(' ');
    }
    if (root.nodeType === 1 && /** @type {Element} */ (root).shadowRoot) walkChildren(/** @type {Element} */ (root));
    else if (root.nodeType === 1) {
      // the root's own visibility does not matter (it may be a freshly mounted, offscreen node)
      for (var c = root.firstChild; c; c = c.nextSibling) walk(c);
    } else walk(root);
    return normalise(parts.join(''));
  }

  ns.visible = Object.freeze({
    visibleText: visibleText,
    normalise: normalise,
    hiddenBox: hiddenBox,
  });
})();
