/* Wherefrom content scripts: the one parameterised extractor (classic script).
 *
 * Everything site-specific comes from the registry (extension/sites/registry.json, loaded as
 * registry.generated.js). This file knows how to
 *   - find the registry entry for the page's URL (siteFor);
 *   - read the mounted turns of a page with one layout alternative (readMounted);
 *   - turn a subtree into the text a reader sees (visibleText);
 *   - accumulate turns across virtualised windows, keyed by native id or a content key
 *     (Accumulator).
 * It has no side effects: capture.js drives it.
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;

  // ---------------------------------------------------------------- URL matching
  // One matcher for content and background: shared/sites.js (loaded before this file).

  var S = globalThis.WherefromSites;
  var matchPatternRegex = S.matchPatternRegex;

  /**
   * The registry entry whose match patterns cover href, or null (then nothing runs).
   * @param {string} href @param {{sites: WfSite[]}} [registry] @returns {WfSite | null}
   */
  function siteFor(href, registry) {
    return S.siteFor(href, registry || ns.registry || { sites: [] });
  }

  // ---------------------------------------------------------------- DOM queries

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
    // keep the outermost matches: a nested match is already part of its ancestor's text
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

  // ---------------------------------------------------------------- visible text

  var SKIP_TAGS = /^(SCRIPT|STYLE|TEMPLATE|NOSCRIPT|svg|SVG|IMG|VIDEO|AUDIO|CANVAS|IFRAME|INPUT|SELECT|TEXTAREA|OBJECT)$/;
  /** @type {Record<string, number>} */
  var INLINE = { inline: 1, 'inline-block': 1, 'inline-flex': 1, 'inline-grid': 1, contents: 1, ruby: 1, 'ruby-text': 1 };
  var INVISIBLE_CHARS = /[\u200B-\u200D\u2060\uFEFF]/g;

  /** @param {string} text @returns {string} */
  function normalise(text) {
    return String(text).replace(INVISIBLE_CHARS, '').replace(/\s+/g, ' ').trim();
  }

  /**
   * The text a reader sees in root: excluded subtrees (exclude selector) and hidden ones
   * (display:none, visibility:hidden, the hidden attribute) removed, a space at every
   * block boundary and <br>, whitespace collapsed. It walks the live DOM (open shadow roots and
   * their slots included) and never changes it.
   *
   * `sink` (optional, content/markdown.js) sees the same walk — every visible text node, <br>,
   * element entered and left, and each skipped media element — so the Markdown built from it
   * holds exactly what the text holds.
   * @param {Node} root @param {string} [exclude] @param {WfSink | null} [sink] @returns {string}
   */
  function visibleText(root, exclude, sink) {
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
      if (node.hasAttribute('hidden')) return;
      var cs = getComputedStyle(node);
      if (cs.display === 'none' || cs.visibility === 'hidden' || cs.visibility === 'collapse') return;
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

  // ---------------------------------------------------------------- layouts

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
    if (typeof t === 'string' || Array.isArray(t)) return asSelector(t);
    return asSelector(t[role]);
  }

  /**
   * Elements of one layout that are turns, in document order, each with its role.
   * @param {ParentNode} root @param {WfSite} site @param {WfLayoutPart} layout @returns {WfTurnElement[]}
   */
  function turnElements(root, site, layout) {
    var deep = !!site.shadow;
    if (layout.turn) {
      var roles = layout.role || {};
      return queryAll(root, asSelector(layout.turn), deep).map(function (el) {
        /** @type {string | null} */
        var role = null;
        if (roles.attr) {
          var v = el.getAttribute(roles.attr);
          role = roles.values ? roles.values[/** @type {string} */ (v)] || null : v;
        } else if (roles.user && hasMatch(el, asSelector(roles.user), deep)) role = 'user';
        else if (roles.assistant && hasMatch(el, asSelector(roles.assistant), deep)) role = 'assistant';
        else role = roles['default'] || null;
        return { el: el, role: role };
      }).filter(/** @param {{el: Element, role: string | null}} t @returns {t is WfTurnElement} */ function (t) {
        return t.role === 'user' || t.role === 'assistant';
      });
    }
    var userSel = asSelector(layout.user), assistantSel = asSelector(layout.assistant);
    // one query for both roles keeps tree order (also across shadow roots)
    /** @type {WfTurnElement[]} */
    var all = queryAll(root, userSel + ', ' + assistantSel, deep).map(function (el) {
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
    if (spec.selector && queryAll(root, asSelector(spec.selector), deep).length) return true;
    if (spec.attr && el) {
      var holder = el.hasAttribute(spec.attr) ? el : el.closest('[' + spec.attr + ']') || el.querySelector('[' + spec.attr + ']');
      if (holder && holder.getAttribute(spec.attr) === String(spec.value)) return true;
    }
    return false;
  }

  /**
   * The one place a turn's content is produced: what a reader sees in the turn element `el` of
   * `role`, read from the layout's text containers (all of them, outermost, joined), without
   * excluded or hidden parts. Returns {text, markdown}, both from one walk of those containers:
   * `text` whitespace-collapsed (search and comparison), `markdown` GFM keeping the structure
   * (content/markdown.js; absent when that module is not loaded). text is '' when nothing is visible.
   * @param {Element} el @param {WfRole} role @param {WfSite} site @param {WfLayoutPart} layout
   * @returns {{text: string, markdown?: string}}
   */
  function turnContent(el, role, site, layout) {
    var deep = !!site.shadow;
    var exclude = excludeFor(site, layout);
    /** @type {WfAdapter} */
    var adapter = ns.adapters[site.id] || {};
    var sel = textSelector(layout, role);
    var nodes = selfOrDescendants(el, sel, deep).filter(function (n) {
      // a text root inside an excluded part of the turn (a thinking panel) is not the reply
      var ex = n.closest(exclude);
      return !(ex && ex !== el && el.contains(ex));
    });
    var md = ns.markdown;
    var before = md ? contentCache.get(el) : null;
    if (before && !adapter.text) {
      // a turn read before: when its text is unchanged, so is its Markdown (no second conversion)
      var plain = normalise(nodes.map(function (n) { return visibleText(n, exclude); }).join(' '));
      if (plain === before.text) return { text: plain, markdown: before.markdown };
    }
    /** @type {WfSink[]} */
    var sinks = [];
    var texts = nodes.map(function (n) {
      var sink = md ? md.sink({ root: n, exclude: exclude, role: role }) : null;
      if (sink) sinks.push(sink);
      return visibleText(n, exclude, sink);
    });
    var text = adapter.text ? adapter.text(el, nodes, exclude, visibleText) : normalise(texts.join(' '));
    /** @type {{text: string, markdown?: string}} */
    var out = { text: text };
    if (md) {
      out.markdown = md.join(sinks);
      contentCache.set(el, { text: text, markdown: out.markdown });
    }
    return out;
  }
  /** @type {WeakMap<Element, {text: string, markdown?: string}>} */
  var contentCache = new WeakMap();  // turn element -> {text, markdown} last read

  /** The Markdown of several parts of one turn (a report and the answer under it), in order. */
  /** @param {Array<string | undefined>} list @returns {string | undefined} */
  function joinMarkdown(list) {
    var parts = list.filter(function (m) { return typeof m === 'string' && m; });
    return parts.length ? parts.join('\n\n') : undefined;
  }

  /** Is the element rendered (no hidden ancestor, a box on the page)? */
  /** @param {Element} el */
  function shown(el) {
    if (typeof el.checkVisibility === 'function') return el.checkVisibility({ visibilityProperty: true });
    return el.getClientRects().length > 0;
  }

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
    var list = orderedTurnElements(root, site, layout);
    var groups = layout.join === 'consecutive' ? joinConsecutive(list)
      : list.map(function (t) { return { el: t.el, role: t.role, parts: [t.el] }; });
    /** @type {WfMountedTurns} */
    var out = [];
    /** @type {Array<{role: WfRole}>} */
    var empty = [];
    groups.forEach(function (g) {
      var contents = g.parts.map(function (p) { return turnContent(p, g.role, site, layout); });
      var text = normalise(contents.map(function (c) { return c.text; }).join(' '));
      if (!text) {
        // an element the reader cannot see (a hidden swipe alternate) is not an empty turn
        if (shown(g.el)) empty.push({ role: g.role });
        return;
      }
      out.push({
        el: g.el,
        role: g.role,
        text: text,
        markdown: joinMarkdown(contents.map(function (c) { return c.markdown; })),
        id: nativeId(g.el, layout.native_id),
        streaming: g.parts.some(function (p) { return isStreaming(root, p, layout.streaming, deep); }),
      });
    });
    var turns = adapter.turns ? adapter.turns(out, { root: root, site: site, layout: layout }) : out;
    turns.empty = empty;
    return turns;
  }

  // ---------------------------------------------------------------- report and artifact panels

  /**
   * Open report/artifact panels of the site (registry `panels`): [{el, text, panel}], for panels
   * showing text. A panel inside a turn element is already part of that turn.
   * @param {ParentNode} root @param {WfSite} site @param {Element[]} turnEls @returns {WfPanelRead[]}
   */
  function readPanels(root, site, turnEls) {
    /** @type {WfPanelRead[]} */
    var out = [];
    (site.panels || []).forEach(function (p) {
      queryAll(root, asSelector(p.selector), !!site.shadow).forEach(function (el) {
        if (turnEls.some(function (t) { return t === el || t.contains(el) || el.contains(t); })) return;
        var content = turnContent(el, 'assistant', site, { text: p.text, exclude: p.exclude });
        if (content.text) out.push({ el: el, text: content.text, markdown: content.markdown, panel: p });
      });
    });
    return out;
  }

  /**
   * An open panel's text belongs to the assistant turn that produced it: the last turn holding
   * the panel's `opener` (the card that opens it) when one is found, else the last assistant turn.
   * @param {WfMountedTurn[]} turns @param {WfPanelRead[]} panels
   */
  function attachPanels(turns, panels) {
    panels.forEach(function (p) {
      /** @type {WfMountedTurn | null} */
      var target = null;
      var opener = asSelector(p.panel.opener);
      if (opener) {
        for (var k = turns.length - 1; k >= 0 && !target; k--) {
          var t = turns[k];
          if (t.role === 'assistant' && t.el && (t.el.matches(opener) || t.el.querySelector(opener))) target = t;
        }
      }
      if (!target) {
        for (var i = turns.length - 1; i >= 0 && !target; i--) if (turns[i].role === 'assistant') target = turns[i];
      }
      if (target) {
        target.text = normalise(target.text + ' ' + p.text);
        target.markdown = joinMarkdown([target.markdown, p.markdown]);
      }
    });
  }

  /** @param {Array<{role: string}>} turns */
  function bothRoles(turns) {
    var u = false, a = false;
    turns.forEach(function (t) { if (t.role === 'user') u = true; else if (t.role === 'assistant') a = true; });
    return u && a;
  }

  /**
   * The first layout alternative (newest first) that finds turns of both roles (else the first
   * that finds any), with them; else the open panels as the page's assistant turns (a page
   * showing only a report); else no turns.
   * `tried` lists every alternative looked at; `empty` the turns dropped for having no text.
   * @param {ParentNode} root @param {WfSite} site @returns {WfFound}
   */
  function detect(root, site) {
    /** @param {WfLayout} layout @param {WfMountedTurns} turns @returns {WfFound} */
    function found(layout, turns) {
      // turns read from the DOM always have their element
      attachPanels(turns, readPanels(root, site, turns.map(function (t) { return /** @type {Element} */ (t.el); })));
      return { layout: layout, turns: turns, tried: tried, empty: turns.empty || [], source: 'dom' };
    }
    /** @type {string[]} */
    var tried = [];
    /** @type {Array<{role: WfRole}>} */
    var empty = [];
    /** @type {{layout: WfLayout, turns: WfMountedTurns} | null} */
    var oneSided = null;   // the first alternative that found turns of one role only
    for (var i = 0; i < site.layouts.length; i++) {
      var layout = site.layouts[i];
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
    if (oneSided) return found(oneSided.layout, oneSided.turns);
    var panels = readPanels(root, site, []);
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

  // ---------------------------------------------------------------- no silent partial capture

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

  // ---------------------------------------------------------------- accumulation

  /** @param {string} s @returns {string} */
  function hashText(s) {
    var h = 5381;
    for (var i = 0; i < s.length; i++) h = ((h << 5) + h + s.charCodeAt(i)) | 0;
    return (h >>> 0).toString(36) + ':' + s.length;
  }

  /**
   * The whole conversation seen so far, across virtualised windows and lazy loads.
   * Each mounted turn is keyed by, in order: its native id; the element it was read from
   * (a streaming reply keeps its node); an entry with the same role and text (a re-mounted
   * turn); or a new key. Order: a new turn goes right after the nearest known turn above it in
   * the mounted window (or before the nearest known one below it), so overlapping windows
   * stitch together whichever way the reader scrolls.
   */
  function Accumulator() {
    /** @type {WfAccEntry[]} */
    this.entries = [];          // [{key, role, text, markdown, id}]
    /** @type {Map<string, WfAccEntry>} */
    this.byKey = new Map();
    /** @type {WeakMap<Element, string>} */
    this.byEl = new WeakMap();
    this.seq = 0;
  }

  /** @param {WfMountedTurn} t @param {Set<string>} claimed @returns {string} */
  Accumulator.prototype._keyFor = function (t, claimed) {
    if (t.id) return t.role + '#' + t.id;
    var k = t.el ? this.byEl.get(t.el) : undefined;
    if (k && !claimed.has(k)) return k;
    var self = this;
    var hit = this.entries.find(function (e) {
      return !e.id && !claimed.has(e.key) && e.role === t.role && e.text === t.text && !self._mountedElsHas(e.key);
    });
    if (hit) return hit.key;
    return t.role + '~' + hashText(t.text) + '~' + (this.seq++);
  };

  /** @param {string} key @returns {boolean} */
  Accumulator.prototype._mountedElsHas = function (key) {
    return this._liveKeys ? this._liveKeys.has(key) : false;
  };

  /**
   * Merge one mounted window (document order). Returns true when anything changed.
   * @param {WfMountedTurn[]} mounted @returns {boolean}
   */
  Accumulator.prototype.merge = function (mounted) {
    /** @type {Set<string>} */
    var claimed = new Set();
    /** @type {string[]} */
    var keys = [];
    var self = this;
    /** @type {Set<string>} */
    var live = new Set();
    this._liveKeys = live;
    mounted.forEach(function (t) {
      var k = t.el ? self.byEl.get(t.el) : undefined;
      if (k && !t.id) live.add(k);
    });
    mounted.forEach(function (t) {
      var k = self._keyFor(t, claimed);
      claimed.add(k);
      keys.push(k);
      if (t.el) self.byEl.set(t.el, k);
    });
    this._liveKeys = null;
    var changed = false;
    for (var i = 0; i < mounted.length; i++) {
      var key = keys[i], t = mounted[i];
      var e = this.byKey.get(key);
      if (e) {
        if (e.text !== t.text || e.role !== t.role || e.markdown !== t.markdown) {
          e.text = t.text; e.role = t.role; e.markdown = t.markdown; changed = true;
        }
        continue;
      }
      e = { key: key, role: t.role, text: t.text, markdown: t.markdown, id: t.id || null };
      var pos = this.entries.length;
      for (var a = i - 1; a >= 0; a--) {
        var above = this.entries.indexOf(/** @type {WfAccEntry} */ (this.byKey.get(keys[a])));  // unknown: -1
        if (above >= 0) { pos = above + 1; break; }
      }
      if (a < 0) {
        for (var b = i + 1; b < keys.length; b++) {
          var below = this.byKey.get(keys[b]);
          if (below) { pos = this.entries.indexOf(below); break; }
        }
      }
      this.entries.splice(pos, 0, e);
      this.byKey.set(key, e);
      changed = true;
    }
    return changed;
  };

  /** The turns for the wire: [{role, text, markdown?, native_id?}]. @returns {WfWireTurn[]} */
  Accumulator.prototype.turns = function () {
    return this.entries.map(function (e) {
      /** @type {WfWireTurn} */
      var t = { role: e.role, text: e.text };
      if (typeof e.markdown === 'string' && e.markdown) t.markdown = e.markdown;
      if (e.id) t.native_id = e.id;
      return t;
    });
  };

  ns.extractor = Object.freeze({
    matchPatternRegex: matchPatternRegex,
    siteFor: siteFor,
    asSelector: asSelector,
    queryAll: queryAll,
    visibleText: visibleText,
    normalise: normalise,
    excludeFor: excludeFor,
    turnElements: turnElements,
    countMatches: countMatches,
    turnContent: turnContent,
    readMounted: readMounted,
    readPanels: readPanels,
    pathPattern: pathPattern,
    missKind: missKind,
    isStreaming: isStreaming,
    detect: detect,
    Accumulator: Accumulator,
  });
})();
