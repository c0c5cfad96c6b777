/* Wherefrom content scripts: a captured turn as Markdown (GFM) (classic script; see files.json).
 *
 * The extractor walks a turn's text roots once (extractor.visibleText); a sink from here sees that
 * same walk and builds a clean copy of what it saw in an inert document (no scripts, no loads, no
 * custom-element upgrades): only visible, non-excluded nodes, page attributes dropped except a
 * link's href. Turndown (vendor/turndown) with the GFM plugin (vendor/joplin-turndown-plugin-gfm)
 * turns that copy into Markdown. Rules here cover only what chat sites do differently:
 *   - code blocks: the innermost <pre> (its <code>), text exactly as shown — editor lines
 *     (CodeMirror .cm-line, Monaco .view-line, block-level line spans) and <br> become newlines,
 *     gutters and line numbers dropped — fenced with the language the page names
 *     (`language-*` / `lang-*` class, data-language, "<lang> code" label, or the header's label);
 *   - math from the TeX the page carries (KaTeX annotation, bare TeX under <math>, data-math,
 *     MathJax, a formula image's alt) as $…$ or $$…$$, while the text keeps what is rendered;
 *   - ARIA tables (role=table/grid/row/cell) as GFM tables; block content in a cell kept inline;
 *   - links with their absolute http(s)/mailto href (tracking parameters are dropped by the
 *     background with shared/urls.js, the one URL rule); images only as links, only http(s);
 *   - a user's prompt shown pre-wrapped keeps the line breaks it was typed with;
 *   - list items wrapped in the page's own elements inside their list (NotebookLM) stay items of
 *     that list; a heading holding blocks (role=heading around a <p>) stays one line.
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;
  var TurndownService = globalThis.TurndownService;  // vendored, untyped (see types.d.ts)
  var gfm = globalThis.turndownPluginGfm;
  if (!TurndownService || !gfm) return;  // vendor files missing: turns carry text only

  var KEEP = /^(P|A|STRONG|B|EM|I|CODE|PRE|UL|OL|LI|TABLE|THEAD|TBODY|TFOOT|TR|TH|TD|H[1-6]|BLOCKQUOTE|HR|DEL|S|STRIKE)$/;
  var TABLE_PARTS = /^(TABLE|THEAD|TBODY|TFOOT|TR)$/;
  var INLINE = /^(A|STRONG|B|EM|I|CODE|DEL|S)$/;  // kept inside a table cell or a heading, which hold one line
  /** @type {Record<string, string>} */
  var ROLE_TAG = {
    table: 'TABLE', grid: 'TABLE', treegrid: 'TABLE', row: 'TR', columnheader: 'TH', rowheader: 'TH',
    cell: 'TD', gridcell: 'TD', list: 'UL', listitem: 'LI', blockquote: 'BLOCKQUOTE',
  };
  var doc = document.implementation.createHTMLDocument('');
  var C = ns.codeBlocks;
  var codeElement = C.codeElement, codeText = C.codeText, codeLanguage = C.codeLanguage;
  var hidden = C.hidden, matches = C.matches, GUTTER = C.GUTTER, EDITOR = C.EDITOR;

  // ------------------------------------------------------------------ math

  /** @param {Element} el @returns {string | null} the TeX a rendered formula carries */
  function texOf(el) {
    var ann = el.querySelector('annotation[encoding="application/x-tex"], annotation[encoding="application/x-latex"]');
    if (ann && ann.textContent.trim()) return ann.textContent;
    var math = el.querySelector('math');
    if (math) {
      var bare = '';
      for (var c = math.firstChild; c; c = c.nextSibling) if (c.nodeType === 3) bare += /** @type {Text} */ (c).data;
      if (bare.trim()) return bare;
      var alt = math.getAttribute('alttext');
      if (alt) return alt;
    }
    var latex = el.getAttribute('data-latex') || el.getAttribute('data-tex');
    if (latex) return latex;
    var script = el.nextElementSibling;
    if (script && script.nodeName === 'SCRIPT' && /^math\/tex/.test(/** @type {HTMLScriptElement} */ (script).type)) return script.textContent;
    return null;
  }

  /**
   * {tex, display} when el is a rendered formula with its TeX, else null.
   * @param {Element} el @returns {{tex: string, display: boolean} | null}
   */
  function mathOf(el) {
    var tex = null, display = false;
    var dm = el.getAttribute('data-math');
    if (dm) {
      tex = dm;
      display = /block|display/.test(el.className || '') || !!el.querySelector('.katex-display') || el.getAttribute('data-display') === 'true';
    } else if (el.classList.contains('katex-display')) {
      tex = texOf(el); display = true;
    } else if (el.classList.contains('katex')) {
      tex = texOf(el);
    } else if (el.nodeName === 'MJX-CONTAINER' || el.classList.contains('MathJax') || el.classList.contains('MathJax_Display')) {
      tex = texOf(el);
      display = el.getAttribute('display') === 'true' || el.classList.contains('MathJax_Display');
    }
    if (tex === null || !tex.trim()) return null;
    return { tex: tex.replace(/\s+/g, ' ').trim(), display: display };
  }

  // ------------------------------------------------------------------ the sink

  /** @param {string | null | undefined} u @returns {string | null} */
  function httpUrl(u) {
    return /^https?:\/\//i.test(u || '') ? /** @type {string} */ (u) : null;
  }

  /**
   * Receives one walk of a turn's text root (see extractor.visibleText) and builds its clean copy.
   * @param {{root: Element, exclude: string, role: string}} opts
   */
  function Sink(opts) {
    this.turnRoot = opts.root;
    this.exclude = opts.exclude;
    this.top = doc.createElement('div');
    var cs = opts.root.nodeType === 1 ? getComputedStyle(opts.root) : null;
    // a prompt shown as typed (pre-wrap, no markup inside): its line breaks are content
    if (opts.role === 'user' && cs && /^pre/.test(cs.whiteSpace) && !opts.root.querySelector('p, li, pre, table, h1, h2, h3')) {
      var typed = doc.createElement('pre');
      typed.setAttribute('data-wf-typed', '');
      this.top.appendChild(typed);
      /** @type {Element[]} */
      this.stack = [typed];
    } else {
      this.stack = [this.top];
    }
    this.role = opts.role;
    this.typed = this.stack[0] !== this.top;  // inside a prompt shown as typed
    this.skip = 0;
    this.cell = 0;   // depth inside table cells: blocks there stay inline
  }

  Sink.prototype.parent = function () { return this.stack[this.stack.length - 1]; };

  /** @param {string} data */
  Sink.prototype.text = function (data) {
    if (this.skip) return;
    var p = this.parent();
    if (TABLE_PARTS.test(p.nodeName) && !data.trim()) return;
    p.appendChild(doc.createTextNode(data));
  };

  Sink.prototype.br = function () {
    if (this.skip) return;
    this.parent().appendChild(this.cell ? doc.createTextNode(' ') : doc.createElement('br'));
  };

  /** A skipped element (img, svg, media): a formula image's TeX, or an http(s) image as a link. */
  /** @param {Element} node */
  Sink.prototype.media = function (node) {
    if (this.skip || node.nodeName !== 'IMG' || hidden(node)) return;
    var alt = (node.getAttribute('alt') || '').trim();
    var mathy = /math|latex|katex|tex|formula|equation/i.test((node.className || '') + ' ' + (node.parentElement ? node.parentElement.className : ''));
    if (alt && (mathy || /\\[a-zA-Z]+|\^\{|_\{/.test(alt))) {
      var block = getComputedStyle(node).display === 'block' ||
        (node.parentElement && !node.parentElement.textContent.trim() && getComputedStyle(node.parentElement).display === 'block');
      this.parent().appendChild(mathNode(alt.replace(/\s+/g, ' '), !!block));
      return;
    }
    var src = httpUrl(/** @type {HTMLImageElement} */ (node).src);
    if (!src) return;  // never a data: or blob: image
    var a = doc.createElement('a');
    a.setAttribute('href', src);
    a.textContent = alt || 'image';
    this.parent().appendChild(a);
  };

  /** @param {string} tex @param {boolean} display */
  function mathNode(tex, display) {
    var m = doc.createElement('wf-math');
    if (display) m.setAttribute('display', '');
    m.textContent = tex;
    return m;
  }

  /** @param {Element} node @param {CSSStyleDeclaration} cs @param {boolean} block */
  Sink.prototype.open = function (node, cs, block) {
    if (this.skip) { this.skip++; return; }
    var p = this.parent();
    if (matches(node, GUTTER)) { this.skip = 1; return; }  // line numbers beside code
    var math = mathOf(node);
    if (math) {
      p.appendChild(mathNode(math.tex, math.display));
      this.skip = 1;
      return;
    }
    var editor = !node.closest('pre') && matches(node, EDITOR) ? node : null;
    if (editor || (node.nodeName === 'PRE' && !node.querySelector('pre'))) {
      var code = editor || codeElement(node);
      var pre = doc.createElement('pre');
      pre.setAttribute('data-wf-code', codeLanguage(node, code, this.turnRoot));
      pre.textContent = codeText(code, this.exclude);
      if (this.cell) {
        var c = doc.createElement('code');
        c.textContent = pre.textContent.replace(/\s+/g, ' ');
        p.appendChild(c);
      } else p.appendChild(pre);
      this.skip = 1;
      return;
    }
    var tag = node.nodeName;
    var role = node.getAttribute('role');
    if (role && ROLE_TAG[role]) tag = ROLE_TAG[role];
    if (/^H[1-6]$/.test(tag) === false && role === 'heading') {
      var level = Math.min(6, Math.max(1, parseInt(node.getAttribute('aria-level') || '2', 10) || 2));
      tag = 'H' + level;
    }
    if (tag === 'PRE') tag = 'DIV';  // a wrapper around the real code <pre>
    /** @type {Element | null} */
    var el = null;
    var typed = false;
    if (this.role === 'user' && !this.typed && !this.cell && /^pre/.test(cs.whiteSpace) &&
        !node.querySelector('p, li, pre, table, h1, h2, h3')) {
      // a prompt shown as typed (pre-wrap, no markup inside): its line breaks are content
      el = doc.createElement('pre');
      el.setAttribute('data-wf-typed', '');
      typed = this.typed = true;
    } else if (tag === 'TH' || tag === 'TD') {
      if (this.cell || !TABLE_PARTS.test(p.nodeName)) el = null; else { el = doc.createElement(tag); this.cell++; }
    } else if (tag === 'TR') {
      el = /^(TABLE|THEAD|TBODY|TFOOT)$/.test(p.nodeName) && !this.cell ? doc.createElement('TR') : null;
    } else if (/^(THEAD|TBODY|TFOOT)$/.test(tag) || role === 'rowgroup') {
      el = p.nodeName === 'TABLE' && !this.cell
        ? doc.createElement(node.querySelector('th, [role="columnheader"]') ? 'THEAD' : tag === 'TFOOT' ? 'TFOOT' : 'TBODY') : null;
    } else if (tag === 'TABLE') {
      el = this.cell ? null : doc.createElement('TABLE');
    } else if (TABLE_PARTS.test(p.nodeName)) {
      el = null;  // a wrapper between table parts
    } else if (this.cell) {
      el = INLINE.test(tag) ? doc.createElement(tag) : null;
      if (!el && block) p.appendChild(doc.createTextNode(' '));
    } else if (/^(UL|OL)$/.test(p.nodeName) && tag !== 'LI' && node.querySelector('li, [role="listitem"]')) {
      el = null;  // a wrapper between a list and its items (custom elements around each <li>)
    } else if (/^H[1-6]$/.test(p.nodeName)) {
      // a heading holding blocks (role=heading around a <p>): Markdown headings are one line
      if (block && p.textContent.trim()) p.appendChild(doc.createTextNode(' '));
      el = doc.createElement(INLINE.test(tag) ? tag : 'SPAN');
    } else if (KEEP.test(tag)) {
      el = doc.createElement(tag);
    } else {
      el = doc.createElement(block ? 'DIV' : 'SPAN');
    }
    if (el && el.nodeName === 'A') {
      var href = node.nodeName === 'A' ? /** @type {HTMLAnchorElement} */ (node).href : '';
      if (/^(https?|mailto):/i.test(href || '')) el.setAttribute('href', href);
      else el = doc.createElement('SPAN');
    }
    if (el && el.nodeName === 'OL' && node.getAttribute('start')) el.setAttribute('start', /** @type {string} */ (node.getAttribute('start')));
    if (el) p.appendChild(el);
    this.stack.push(el || p);
    this._opened = this._opened || [];
    this._opened.push({
      cell: !!el && (el.nodeName === 'TH' || el.nodeName === 'TD'),
      block: !el && this.cell && block,
      table: !!el && el.nodeName === 'TABLE',
      typed: typed,
    });
  };

  /**
   * A grid laid out by CSS (Mistral: role=table holding columnheader and cell elements, no rows):
   * cells straight under the table are grouped into rows, as many per row as there are headers.
   */
  /** @param {Element} table */
  function gridRows(table) {
    var cells = Array.prototype.filter.call(table.childNodes, function (c) { return c.nodeName === 'TH' || c.nodeName === 'TD'; });
    if (!cells.length) return;
    var perRow = cells.filter(function (c) { return c.nodeName === 'TH'; }).length || cells.length;
    /** @type {Element | null} */
    var row = null;
    cells.forEach(function (c, i) {
      if (i % perRow === 0) { row = doc.createElement('TR'); table.insertBefore(row, c); }
      /** @type {Element} */ (row).appendChild(c);
    });
  }

  Sink.prototype.close = function () {
    if (this.skip) { this.skip--; return; }
    var closed = /** @type {Element} */ (this.stack.pop());
    var o = this._opened.pop();
    if (o.table) gridRows(closed);
    if (o.typed) this.typed = false;
    if (o.cell) this.cell--;
    if (o.block) this.parent().appendChild(doc.createTextNode(' '));
  };

  // ------------------------------------------------------------------ Turndown

  /** @param {string} code */
  function fenceFor(code) {
    var longest = 0;
    var runs = code.match(/`+/g) || [];
    runs.forEach(function (r) { longest = Math.max(longest, r.length); });
    return new Array(Math.max(3, longest + 1) + 1).join('`');
  }

  var service = new TurndownService({
    headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '*',
    strongDelimiter: '**', hr: '---', linkStyle: 'inlined',
  });
  service.use(gfm.gfm);
  service.addRule('wfTable', {
    // the plugin keeps tables holding code or lists as HTML; here a table is always GFM (cells
    // hold inline content only, see Sink.open)
    filter: 'table',
    /** @param {string} content @param {HTMLTableElement} node */
    replacement: function (content, node) {
      var rows = content.replace(/\n+/g, '\n').trim();
      if (!rows) return '';
      var lines = rows.split('\n');
      if (!(lines.length > 1 && /^\|\s*:?-{3}/.test(lines[1]))) {
        var cols = 0;
        for (var i = 0; i < node.rows.length; i++) cols = Math.max(cols, node.rows[i].cells.length);
        var head = '|', rule = '|';
        for (var k = 0; k < cols; k++) { head += '     |'; rule += ' --- |'; }
        rows = head + '\n' + rule + '\n' + rows;
      }
      return '\n\n' + rows + '\n\n';
    },
  });
  service.addRule('wfCode', {
    filter: function (/** @type {Element} */ node) { return node.nodeName === 'PRE' && node.hasAttribute('data-wf-code'); },
    /** @param {string} content @param {Element} node */
    replacement: function (content, node) {
      var code = node.textContent;
      var fence = fenceFor(code);
      return '\n\n' + fence + node.getAttribute('data-wf-code') + '\n' + code + '\n' + fence + '\n\n';
    },
  });
  service.addRule('wfTyped', {
    filter: function (/** @type {Element} */ node) { return node.nodeName === 'PRE' && node.hasAttribute('data-wf-typed'); },
    /** @param {string} content */
    replacement: function (content) {
      return '\n\n' + content.replace(/^\n+|\s+$/g, '').replace(/\n{3,}/g, '\n\n') + '\n\n';
    },
  });
  service.addRule('wfMath', {
    filter: function (/** @type {Element} */ node) { return node.nodeName === 'WF-MATH'; },
    /** @param {string} content @param {Element} node */
    replacement: function (content, node) {
      var tex = node.textContent;
      return node.hasAttribute('display') ? '\n\n$$\n' + tex + '\n$$\n\n' : '$' + tex + '$';
    },
  });

  /** One Markdown document from the sinks of a turn's text roots. */
  /** @param {Sink[]} sinks @returns {string} */
  function join(sinks) {
    /** @type {string[]} */
    var parts = [];
    sinks.forEach(function (s) {
      var md = '';
      try { md = service.turndown(s.top); } catch (e) { md = ''; }
      md = md.replace(/^\n+|\s+$/g, '');
      if (md) parts.push(md);
    });
    return parts.join('\n\n');
  }

  ns.markdown = Object.freeze({
    /** @param {{root: Element, exclude: string, role: string}} opts */
    sink: function (opts) { return new Sink(opts); },
    join: join,
    codeText: codeText,
    mathOf: mathOf,
  });
})();
