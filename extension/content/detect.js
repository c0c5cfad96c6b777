/* Wherefrom content scripts: which reader finds the page's turns, and the turns (classic script).
 *
 * The registry's layout alternatives are tried newest first; the first that finds turns of both
 * roles wins. When none does (no layout matched, or a layout found one side only), the generic
 * reader (content/generic.js), which knows no site, reads the page's structure; failing that the
 * open panels are the page's assistant turns (a page showing only a report).
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;
  var D = ns.dom, V = ns.visible, L = ns.layouts, T = ns.turnText, P = ns.panels;

  /**
   * Pair-form layouts with `join: "consecutive"`: matches of the same role that follow each other
   * are one turn (a site without a per-answer container, where one answer is several blocks:
   * a report card and the answer under it). Document order is kept.
   * @param {WfTurnElement[]} list @returns {Array<WfTurnElement & {parts: Element[]}>}
   */
  function joinConsecutive(list) {
    /** @type {Array<WfTurnElement & {parts: Element[]}>} */
    var out = [];
    list.forEach(function (t) {
      var prev = out[out.length - 1];
      if (prev && prev.role === t.role) prev.parts.push(t.el);
      else out.push({ el: t.el, role: t.role, parts: [t.el] });
    });
    return out;
  }

  /**
   * The turns one layout finds mounted now: [{el, role, text, id, streaming}], document order.
   * Turns whose visible text is empty (placeholders, a reply that has not started) are dropped
   * from the list and counted in its `empty` property ([{role}], for the no-silent-partial check).
   * @param {ParentNode} root @param {WfSite} site @param {WfLayoutPart} layout @returns {WfMountedTurns}
   */
  function readMounted(root, site, layout) {
    var deep = !!site.shadow;
    /** @type {WfAdapter} */
    var adapter = ns.adapters[site.id] || {};
    var list = L.orderedTurnElements(root, site, layout);
    var groups = layout.join === 'consecutive' ? joinConsecutive(list)
      : list.map(function (t) { return { el: t.el, role: t.role, parts: [t.el] }; });
    /** @type {WfMountedTurns} */
    var out = [];
    /** @type {Array<{role: WfRole}>} */
    var empty = [];
    groups.forEach(function (g) {
      var contents = g.parts.map(function (p) { return T.turnContent(p, g.role, site, layout); });
      var text = V.normalise(contents.map(function (c) { return c.text; }).join(' '));
      if (!text) {
        // an element the reader cannot see (a hidden swipe alternate), or a lazily rendered
        // message not mounted yet (a sized placeholder), is not an empty turn
        var waiting = contents.length && contents.every(function (c) { return c.placeholder; });
        if (D.shown(g.el) && !waiting) empty.push({ role: g.role });
        return;
      }
      out.push({
        el: g.el,
        role: g.role,
        text: text,
        markdown: T.joinMarkdown(contents.map(function (c) { return c.markdown; })),
        id: L.nativeId(g.el, layout.native_id),
        streaming: g.parts.some(function (p) { return L.isStreaming(root, p, layout.streaming, deep); }),
      });
    });
    var turns = adapter.turns ? adapter.turns(out, { root: root, site: site, layout: layout }) : out;
    turns.empty = empty;
    return turns;
  }

  /** @param {Array<{role: string}>} turns */
  function bothRoles(turns) {
    var u = false, a = false;
    turns.forEach(function (t) { if (t.role === 'user') u = true; else if (t.role === 'assistant') a = true; });
    return u && a;
  }

  /**
   * The first layout alternative (newest first) that finds turns of both roles, with them; else
   * the generic reader's turns when it finds both roles; else the first alternative that found
   * turns of one role; else the open panels as the page's assistant turns (a page showing only a
   * report); else the generic reader's turns of one role; else no turns. `generic` true forces the generic reader (the maintainers' switch).
   * `tried` lists every reader looked at; `empty` the turns dropped for having no text.
   * @param {ParentNode} root @param {WfSite} site @param {{generic?: boolean}} [opts] @returns {WfFound}
   */
  function detect(root, site, opts) {
    /** @param {WfFoundLayout} layout @param {WfMountedTurns} turns @param {string} [source] @returns {WfFound} */
    function found(layout, turns, source) {
      // turns read from the DOM always have their element
      P.attachPanels(turns, P.readPanels(root, site, turns.map(function (t) { return t.el; })));
      return { layout: layout, turns: turns, tried: tried, empty: turns.empty || [], source: source || 'dom' };
    }
    /** @type {string[]} */
    var tried = [];
    /** @type {Array<{role: WfRole}>} */
    var empty = [];
    /** @type {{layout: WfLayout, turns: WfMountedTurns} | null} */
    var oneSided = null;   // the first alternative that found turns of one role only
    var layouts = opts && opts.generic ? [] : site.layouts;
    for (var i = 0; i < layouts.length; i++) {
      var layout = layouts[i];
      tried.push(layout.id);
      var turns = readMounted(root, site, layout);
      if (turns.length && !bothRoles(turns)) {
        // a share page can match an older alternative on one side only: look further
        if (!oneSided) oneSided = { layout: layout, turns: turns };
        continue;
      }
      if (turns.length) return found(layout, turns);
      empty = empty.concat(turns.empty || []);
    }
    /** @type {WfMountedTurns} */
    var g = [];
    if (ns.generic) {
      tried.push('generic');
      g = ns.generic.read(root, site);
      // forced, or the page's own signals name both sides: the generic reader's turns
      if (bothRoles(g) && (!g.guess || layouts.length === 0)) return found(GENERIC, g, 'generic');
    }
    if (oneSided) return found(oneSided.layout, oneSided.turns);
    var panels = P.readPanels(root, site, []);
    if (!panels.length && g.length) return found(GENERIC, g, 'generic');
    if (panels.length) {
      tried.push('panels');
      return {
        layout: { id: 'panel:' + panels[0].panel.id, lazy: 'none' },
        turns: panels.map(function (p) {
          return { el: p.el, role: 'assistant', text: p.text, markdown: p.markdown, id: null, streaming: false };
        }),
        tried: tried, empty: [], source: 'panel',
      };
    }
    return { layout: null, turns: [], tried: tried, empty: empty, source: 'dom' };
  }

  /** The generic reader's layout: no site data, nothing to scroll. */
  var GENERIC = Object.freeze({ id: 'generic', lazy: 'none' });

  /**
   * The page's own data (registry `page_data`) is the whole conversation: it wins over fewer
   * turns read from the DOM, and over the generic reader's as many.
   * @param {WfFound} found @param {Array<unknown>} dataTurns @returns {boolean}
   */
  function preferPageData(found, dataTurns) {
    return dataTurns.length > found.turns.length || (found.source === 'generic' && dataTurns.length >= found.turns.length && dataTurns.length > 0);
  }

  ns.detect = Object.freeze({ readMounted: readMounted, detect: detect, bothRoles: bothRoles, preferPageData: preferPageData });
})();
