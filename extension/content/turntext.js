/* Wherefrom content scripts: a turn's content, {text, markdown}, from one walk (classic script).
 *
 * The one place a turn's content is produced, for registry layouts, panels and the generic
 * reader alike: the visible text of its text roots (content/visible.js) and, from the same walk,
 * its Markdown (content/markdown.js, when loaded).
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;
  var D = ns.dom, V = ns.visible;

  /** @type {WeakMap<Element, {text: string, markdown?: string}>} */
  var contentCache = new WeakMap();  // turn element -> {text, markdown} last read

  /**
   * The content of text roots `nodes` of turn element `el`: {text, markdown}, both from one walk
   * of those roots, without excluded or hidden parts. `text` whitespace-collapsed (search and
   * comparison), `markdown` GFM keeping the structure (absent when content/markdown.js is not
   * loaded). text is '' when nothing is visible. `adapter` (a site's code hook) may rewrite text.
   * @param {Element} el @param {Element[]} nodes @param {string} exclude @param {WfRole} role
   * @param {WfAdapter} [adapter] @param {Set<Element> | null} [skip] elements left out too
   * @returns {WfContent}
   */
  function contentOf(el, nodes, exclude, role, adapter, skip) {
    var md = ns.markdown;
    var before = md ? contentCache.get(el) : null;
    if (before && !(adapter && adapter.text)) {
      // a turn read before: when its text is unchanged, so is its Markdown (no second conversion)
      var plain = V.normalise(nodes.map(function (n) { return V.visibleText(n, exclude, null, skip); }).join(' '));
      if (plain === before.text) return { text: plain, markdown: before.markdown };
    }
    /** @type {WfSink[]} */
    var sinks = [];
    var texts = nodes.map(function (n) {
      var sink = md ? md.sink({ root: n, exclude: exclude, role: role }) : null;
      if (sink) sinks.push(sink);
      return V.visibleText(n, exclude, sink, skip);
    });
    var text = adapter && adapter.text ? adapter.text(el, nodes, exclude, V.visibleText) : V.normalise(texts.join(' '));
    /** @type {WfContent} */
    var out = { text: text };
    if (md) {
      out.markdown = md.join(sinks);
      contentCache.set(el, { text: text, markdown: out.markdown });
    }
    return out;
  }

  /**
   * What a reader sees in the turn element `el` of `role` of a registry layout, read from the
   * layout's text containers (all of them, outermost, joined).
   * @param {Element} el @param {WfRole} role @param {WfSite} site @param {WfLayoutPart} layout
   * @returns {WfContent}
   */
  function turnContent(el, role, site, layout) {
    var deep = !!site.shadow;
    var exclude = ns.layouts.excludeFor(site, layout);
    var sel = ns.layouts.textSelector(layout, role);
    var nodes = D.selfOrDescendants(el, sel, deep).filter(function (n) {
      // a text root inside an excluded part of the turn (a thinking panel) is not the reply
      var ex = n.closest(exclude);
      return !(ex && ex !== el && el.contains(ex));
    });
    var content = contentOf(el, nodes, exclude, role, ns.adapters[site.id]);
    if (!content.text && nodes.length && nodes.every(placeholder)) content.placeholder = true;
    return content;
  }

  /**
   * A text root holding no content yet: only empty boxes given a size by style, which a lazily
   * rendering list mounts in place of a message that is off screen (not an empty turn).
   * @param {Element} root @returns {boolean}
   */
  function placeholder(root) {
    if (normaliseText(root)) return false;
    var boxes = root.querySelectorAll('*');
    if (!boxes.length) return false;
    for (var i = 0; i < boxes.length; i++) {
      var b = /** @type {HTMLElement} */ (boxes[i]);
      if (b.children.length || !(b.style && (b.style.height || b.style.minHeight))) return false;
    }
    return true;
  }

  /** @param {Element} root */
  function normaliseText(root) { return V.normalise(root.textContent || ''); }

  /** The Markdown of several parts of one turn (a report and the answer under it), in order. */
  /** @param {Array<string | undefined>} list @returns {string | undefined} */
  function joinMarkdown(list) {
    var parts = list.filter(function (m) { return typeof m === 'string' && m; });
    return parts.length ? parts.join('\n\n') : undefined;
  }

  ns.turnText = Object.freeze({
    contentOf: contentOf,
    turnContent: turnContent,
    joinMarkdown: joinMarkdown,
  });
})();
