/* Wherefrom content scripts: the generic conversation reader, which knows no site (classic script).
 *
 * When no registry layout finds both sides of a conversation (a redesign, renamed CSS-module
 * classes, a site nobody described), this reader finds the turns from the page's structure alone:
 *   - role signals: author/role attributes (`data-message-author-role="user"`, `data-turn-role=
 *     "Model"`, `data-content="ai-message"`, `source="bot"` ...), custom element names
 *     (`<user-query>`, `<model-response>`) and speaker labels, often visually hidden ("You said",
 *     "Copilot said", an aria-label of that form);
 *   - the thread: the nearest container whose rows (element children with text) separate those
 *     signals, one role per row — the repeated sibling containers of a chat; without any signal,
 *     the container of repeated rows holding the most text. A text field's box holding little
 *     else (the composer, its placeholder) is never a row;
 *   - a row without a signal takes the side the signals leave open (the other one; never a title
 *     bar, one heading among controls, over a document of the signalled side), else its
 *     body decides: rich text (paragraphs, lists, code, tables, headings) is the assistant's,
 *     plain text aligned to the end (right in a left-to-right page) or plain text is the user's;
 *     a flat row of a shape of its own at either end of the thread is its banner, no turn.
 * Each turn's content comes from turntext.js like any layout's, without buttons, menus, form
 * controls, the site's chrome exclusions (registry `exclude`, data) and the speaker labels.
 * Its captures are marked layout `generic`.
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;
  var V = ns.visible;

  var S = ns.genericSignals;
  var signals = S.signals;
  var CHROME = ns.genericChrome.CHROME;
  var OUTSIDE = S.OUTSIDE;
  var RICH = 'p, ul, ol, pre, table, h1, h2, h3, h4, h5, h6, blockquote, [role="table"], [role="grid"]';

  var NO_TEXT = /^(SCRIPT|STYLE|TEMPLATE|NOSCRIPT|svg|SVG|IFRAME|OBJECT|TEXTAREA|SELECT)$/;
  /** @type {WeakMap<Element, number>} */
  var lengths = new WeakMap();

  /** How many visible characters an element holds (scripts, hidden parts and chrome left out). */
  /** @param {Element} el @returns {number} */
  function textLength(el) {
    var known = lengths.get(el);
    if (known !== undefined) return known;
    var n = 0;
    if (!NO_TEXT.test(el.nodeName) && !el.hasAttribute('hidden') && !el.matches(CHROME)) {
      var style = /** @type {HTMLElement} */ (el).style;
      if (!(style && style.display === 'none')) {
        for (var c = el.firstChild; c; c = c.nextSibling) {
          if (c.nodeType === 3) n += V.normalise(/** @type {Text} */ (c).data).length;
          else if (c.nodeType === 1) n += textLength(/** @type {Element} */ (c));
        }
      }
    }
    lengths.set(el, n);
    return n;
  }

  // a text field and the little text around it (its placeholder, a model chip) is a composer
  var EDITABLE = '[contenteditable="true"], [contenteditable=""], textarea:not([readonly]), ' +
    '[role="textbox"]:not([aria-readonly="true"], [contenteditable="false"], [readonly])';
  var COMPOSER_TEXT = 60;

  /** @param {Element} el @returns {boolean} is el the box of a text field (the composer), not a message */
  function composerBox(el) {
    var n = textLength(el);
    return n <= COMPOSER_TEXT && !!el.querySelector(EDITABLE);
  }

  /** @param {Element} el @returns {Element[]} the element children a reader sees text in */
  function rows(el) {
    return Array.prototype.filter.call(el.children, function (/** @type {Element} */ c) {
      return !c.matches(OUTSIDE) && textLength(c) > 0 && !composerBox(c);
    });
  }

  /**
   * The thread's rows: from the signals' nearest common container, each row holding signals of
   * one side at most (a row holding both is opened into its own rows).
   * @param {Element} box @param {Array<{el: Element, role: WfRole}>} sigs @returns {Element[]}
   */
  function threadRows(box, sigs) {
    /** @type {Element[]} */
    var out = [];
    rows(box).forEach(function (r) {
      var inside = sigs.filter(function (s) { return r.contains(s.el); });
      var sides = sideSet(inside);
      if (sides > 1 && r.children.length) out = out.concat(threadRows(r, inside));
      else out.push(r);
    });
    return out;
  }

  /** @param {Array<{role: WfRole}>} sigs @returns {number} how many sides they name */
  function sideSet(sigs) {
    var u = sigs.some(function (s) { return s.role === 'user'; });
    var a = sigs.some(function (s) { return s.role === 'assistant'; });
    return (u ? 1 : 0) + (a ? 1 : 0);
  }

  /** @param {Element[]} els @returns {Element | null} */
  function commonBox(els) {
    /** @type {Element | null} */
    var box = els[0] || null;
    while (box && !els.every(function (e) { return /** @type {Element} */ (box).contains(e); })) box = box.parentElement;
    return box;
  }

  // elements that are parts of a message's body, never a thread's rows
  var BODY_PARTS = /^(p|li|h[1-6]|pre|table|thead|tbody|tr|td|th|blockquote|span|a|strong|em|b|i|code|br|img|ul|ol|dl|dt|dd|hr|sup|sub|math)$/;

  /** An element's shape: its tag and its attribute names (no values: a redeploy renames those). */
  /** @param {Element} el @returns {string} */
  function shape(el) {
    var names = [];
    for (var a = 0; a < el.attributes.length; a++) {
      var n = el.attributes[a].name;
      if (!/^(class|style|tabindex|dir|aria-.*)$/.test(n)) names.push(n);
    }
    return el.localName + '[' + names.sort().join(',') + ']';
  }

  /** @param {Element} el @returns {Element[]} el's rows that share their shape with another row */
  function repeatedRows(el) {
    var rs = rows(el);
    /** @type {Record<string, number>} */
    var count = {};
    rs.forEach(function (r) { var k = shape(r); count[k] = (count[k] || 0) + 1; });
    return rs.filter(function (r) { return count[shape(r)] > 1 && !BODY_PARTS.test(r.localName); });
  }

  /**
   * Without any signal: the thread is the container of repeated sibling rows (the same shape)
   * holding the most text; of equal ones the innermost. A message body's paragraphs are not rows.
   * @param {ParentNode} root @returns {Element | null}
   */
  function repeatedBox(root) {
    /** @type {Element | null} */
    var best = null;
    var bestScore = 0;
    var all = root.querySelectorAll('body, body *');
    for (var i = 0; i < all.length; i++) {
      var el = all[i];
      if (BODY_PARTS.test(el.localName) || el.closest(OUTSIDE + ', math, svg, ' + RICH)) continue;
      var rs = repeatedRows(el);
      if (rs.length < 2) continue;
      // rows one component renders carry the same attributes: a bare container is weak evidence
      // and rows of one list are alike a level or two down as well (bare boxes alike say little)
      var inner = rs.map(function (r) { return deepShape(r, 2); });
      var weight = 1 + shape(rs[0]).split(',').length - (/\[\]$/.test(shape(rs[0])) ? 1 : 0) +
        (/\[[^\]]/.test(inner[0]) && inner.every(function (k) { return k === inner[0]; }) ? 1 : 0);
      var text = weight * rs.reduce(function (n, r) { return n + textLength(r); }, 0);
      if (text >= bestScore) { best = el; bestScore = text; }
    }
    return best;
  }

  /** An answer's body: lists, code, tables, headings, quotes, or several paragraphs (a prompt is plain). */
  /** @param {Element} row */
  function richText(row) {
    return !!row.querySelector('ul, ol, pre, table, h1, h2, h3, h4, h5, h6, blockquote, [role="table"], [role="grid"]') ||
      row.querySelectorAll('p').length >= 2;
  }

  /** A row's inner shape: the shapes of its containers down to `depth` levels (message content left out). */
  /** @param {Element} el @param {number} depth @returns {string} */
  function deepShape(el, depth) {
    var kids = depth ? Array.prototype.filter.call(el.children, function (/** @type {Element} */ c) {
      return !BODY_PARTS.test(c.localName) && textLength(c) > 0;
    }).map(function (/** @type {Element} */ c) { return deepShape(c, depth - 1); }) : [];
    return shape(el) + (kids.length ? '(' + kids.join(' ') + ')' : '');
  }

  /**
   * The sides of rows no signal names. When the rows are of two inner shapes, one per side (they
   * alternate, or each holds two rows or more; not a lone answer with a search header), the
   * shape holding more rich text (or, as rich, the one not opening the thread) is the
   * assistant's; otherwise an end-aligned row is the user's, a rich one the assistant's, and the
   * rest alternate, the thread opening with the user.
   * @param {Element[]} list @returns {Array<WfRole | null>} null for a banner (no turn)
   */
  function guessRoles(list) {
    var shapes = list.map(function (r) { return deepShape(r, 3); });
    banners(list, shapes).forEach(function (i) { shapes[i] = ''; });
    var kinds = shapes.filter(function (k, i) { return k && shapes.indexOf(k) === i; });
    var count = kinds.map(function (k) { return shapes.filter(function (x) { return x === k; }).length; });
    var alternate = shapes.every(function (k, i) { return !k || i === 0 || k !== shapes[i - 1]; });
    if (kinds.length === 2 && list.length > 2 && (alternate || Math.min(count[0], count[1]) >= 2)) {
      var rich = kinds.map(function (k) {
        return list.filter(function (r, i) { return shapes[i] === k && richText(r); }).length / shapes.filter(function (x) { return x === k; }).length;
      });
      var bot = rich[0] === rich[1] ? kinds.indexOf(shapes[0]) === 0 ? 1 : 0 : rich[0] > rich[1] ? 0 : 1;
      return shapes.map(function (k) { return !k ? null : k === kinds[bot] ? 'assistant' : 'user'; });
    }
    /** @type {WfRole | null} */
    var prev = null;
    return list.map(function (row, i) {
      if (!shapes[i]) return null;
      /** @type {WfRole} */
      var role = endAligned(row) ? 'user' : prev === 'user' ? 'assistant' : prev === null ? 'user' : richText(row) ? 'assistant' : 'user';
      prev = role;
      return role;
    });
  }

  /** @param {Element} row @returns {Element[]} the parts of a row where it first forks (its boxes with text) */
  function fork(row) {
    var x = row;
    for (var n = 0; n < 40; n++) {
      var kids = rows(x);
      if (kids.length !== 1) return kids;
      x = kids[0];
    }
    return [];
  }

  /**
   * A thread of exchanges (a search-style chat: each row a prompt over its answer): two or more
   * consecutive rows of one shape, each forking into two boxes, the first (the prompt) of one
   * shape in every row, the prompts all different (a speaker label repeats). Then the parts are the turns, the
   * prompt the user's and the answer the assistant's, and rows that are no exchange (a notebook's
   * summary, a date) are none. Null when the thread is not one of exchanges.
   * @param {Element[]} list @returns {Array<{el: Element, role: WfRole}> | null}
   */
  function exchanges(list) {
    var parts = list.map(fork);
    var pairs = list.map(function (r, i) {
      var p = parts[i];
      return p.length === 2 && !BODY_PARTS.test(p[0].localName) && !BODY_PARTS.test(p[1].localName);
    });
    var first = pairs.indexOf(true), last = pairs.lastIndexOf(true);
    if (first < 0 || last === first) return null;
    var kind = deepShape(list[first], 3);
    var a = deepShape(parts[first][0], 2);
    /** @type {string[]} */
    var prompts = [];
    for (var i = first; i <= last; i++) {
      var p = parts[i];
      if (!pairs[i] || deepShape(list[i], 3) !== kind || deepShape(p[0], 2) !== a) return null;
      var t = V.normalise(p[0].textContent || '');
      if (prompts.indexOf(t) >= 0) return null;
      prompts.push(t);
    }
    /** @type {Array<{el: Element, role: WfRole}>} */
    var out = [];
    for (var j = first; j <= last; j++) {
      out.push({ el: parts[j][0], role: 'user' }, { el: parts[j][1], role: 'assistant' });
    }
    return out;
  }

  /**
   * A thread's banner ("This conversation is generated by AI"): the first or last row, flat (inline
   * text, no boxes) and of a shape of its own, while every other row holds boxes.
   * @param {Element[]} list @param {string[]} shapes @returns {number[]} the banners' indexes
   */
  function banners(list, shapes) {
    var flat = shapes.map(function (k) { return k.indexOf('(') < 0; });
    return [0, list.length - 1].filter(function (i, j, ends) {
      return list.length > 3 && ends.indexOf(i) === j && flat[i] && shapes.indexOf(shapes[i]) === shapes.lastIndexOf(shapes[i]) &&
        flat.filter(Boolean).length === 1;
    });
  }

  /** Is a row's bubble pushed to the end of the line (a sent message)? */
  /** @param {Element} row */
  function endAligned(row) {
    for (var el = /** @type {Element | null} */ (row), n = 0; el && n < 4; el = el.firstElementChild, n++) {
      var cs = getComputedStyle(el);
      if (cs.alignSelf === 'flex-end' || cs.justifyContent === 'flex-end' || cs.alignItems === 'flex-end' ||
        cs.textAlign === 'right' || cs.marginLeft === 'auto' || cs.float === 'right') return true;
    }
    return false;
  }

  /** A title bar: controls and one heading, which holds all the row's text. */
  /** @param {Element} row */
  function titleBar(row) {
    var heads = row.querySelectorAll('h1, h2, h3, h4, h5, h6');
    return heads.length === 1 && textLength(heads[0]) === textLength(row) && !!row.querySelector('button, [role="button"]');
  }

  /**
   * The turns the page's structure shows: [{el, role, text, markdown, id: null, streaming: false}].
   * @param {ParentNode} root @param {WfSite} site @returns {WfMountedTurns}
   */
  function read(root, site) {
    var sigs = signals(root);
    /** @type {Element | null} */
    var box = null;
    if (sigs.length) {
      box = commonBox(sigs.map(function (s) { return s.el; }));
      // one signal, or all of them in one message: climb to the container of repeated rows
      while (box && box.parentElement && (rows(box).length < 2 || sideSet(sigs) < 2 && box === sigs[0].el)) box = box.parentElement;
      while (box && sideSet(sigs) < 2 && box.parentElement && rows(box).length < 2) box = box.parentElement;
    } else {
      box = repeatedBox(root);
    }
    /** @type {WfMountedTurns} */
    var out = [];
    out.empty = [];
    // signals of both sides name the roles; rows read without them are a guess (`guess`)
    out.guess = sideSet(sigs) < 2;
    if (!box) return out;
    out.box = box;  // the thread: coverage.js measures lost text against all of it
    var list = sigs.length ? threadRows(box, sigs) : repeatedRows(box);
    if (sigs.length && sideSet(sigs) < 2 && list.length < 2) return out;
    var labels = new Set(sigs.filter(function (s) { return s.label; }).map(function (s) { return s.el; }));
    var exclude = ns.layouts.excludeFor(site, null) + ', ' + CHROME;
    var sides = sideSet(sigs);
    var known = sigs.length ? sigs[0].role : null;
    var pairs = sigs.length ? null : exchanges(list);
    var guessed = sides || pairs ? [] : guessRoles(list);
    /** @type {Array<{el: Element, role: WfRole, inside: WfSignal[]}>} */
    var picked = pairs ? pairs.map(function (p) { return { el: p.el, role: p.role, inside: [] }; }) : [];
    if (!pairs) list.forEach(function (row, i) {
      if (labels.has(row)) return;  // a speaker label is not a message
      var inside = sigs.filter(function (s) { return row.contains(s.el) || s.el.contains(row); });
      /** @type {WfRole} */
      var role;
      if (inside.length) role = inside[0].role;
      else if (sides === 2) return;  // both sides are signalled: a row without a signal is chrome (a date divider)
      else if (sides === 1 && known) {
        if (titleBar(row)) return;  // a panel's title over its document is no message of the other side
        role = known === 'user' ? 'assistant' : 'user';
      }
      else if (guessed[i]) role = guessed[i];
      else return;  // a banner over the thread
      picked.push({ el: row, role: role, inside: inside });
    });
    S.speakerLabels(picked).forEach(function (el) { labels.add(el); });
    picked.forEach(function (p) {
      var skip = new Set(labels);
      ns.genericChrome.skipped(p.el, labels).forEach(function (el) { skip.add(el); });
      var c = ns.turnText.contentOf(p.el, textRoots(p.el, p.inside), exclude, p.role, undefined, skip);
      if (!c.text) return;
      out.push({ el: p.el, role: p.role, text: c.text, markdown: c.markdown, id: null, streaming: false });
    });
    return out;
  }

  /**
   * Where a row's message is: the row when it is (or is inside) an element that names its side;
   * else the outermost such elements inside it (a message beside its avatar, time stamp or run
   * time); else the whole row. Speaker labels name a side but hold no message.
   * @param {Element} row @param {Array<{el: Element, label: boolean}>} inside @returns {Element[]}
   */
  function textRoots(row, inside) {
    var named = inside.filter(function (s) { return !s.label; });
    if (!named.length || named.some(function (s) { return s.el === row || s.el.contains(row); })) return [row];
    return ns.dom.outermost(named.map(function (s) { return s.el; }));
  }

  /** The conversation region of turns read from the DOM: their nearest common container. */
  /** @param {ParentNode} root @param {WfMountedTurn[]} turns @returns {Element | null} */
  function region(root, turns) {
    var els = /** @type {Element[]} */ (turns.map(function (t) { return t.el; }).filter(Boolean));
    return els.length ? commonBox(els) : null;
  }

  ns.generic = Object.freeze({ read: read, region: region });
})();
