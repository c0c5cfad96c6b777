/* Wherefrom content scripts: code blocks as the page shows them (classic script; see files.json).
 *
 * For the Markdown of a turn (content/markdown.js): the element holding a block's code, its text
 * exactly as shown — editor lines (CodeMirror .cm-line, Monaco .view-line, block-level line
 * spans) and <br> become newlines, gutters and line numbers dropped — and the language the page
 * names (`language-*` / `lang-*` class, data-language, "<lang> code" label, or the header's label).
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;

  var GUTTER = '.cm-gutters, .cm-gutter, .line-numbers-rows, .linenumber, .hljs-ln-numbers, ' +
    '.react-syntax-highlighter-line-number, [class*="line-number"], [class*="lineNumber"], ' +
    '[class*="linenumber"], .margin-view-overlays, .line-numbers';
  var LINE = '.cm-line, .view-line, .line';
  // a code editor shown outside a <pre>: its content element is the code
  var EDITOR = '.cm-content, .view-lines';
  var NOT_A_LANG = /^(copy|copy code|copied|code|run|edit|download|wrap|preview|expand|collapse|show more|show less|insert|apply)$/i;
  var LANG_WORD = /^[A-Za-z][\w#+.\- ]{0,23}$/;

  /** @param {Element} el */
  function hidden(el) {
    if (el.hasAttribute('hidden')) return true;
    var cs = getComputedStyle(el);
    return cs.display === 'none' || cs.visibility === 'hidden' || cs.visibility === 'collapse';
  }

  /** @param {Element} el @param {string | null | undefined} sel */
  function matches(el, sel) {
    try { return !!sel && el.matches(sel); } catch (e) { return false; }
  }

  // ------------------------------------------------------------------ code

  /** The element whose text is the code: an editor's content, the <pre>'s single <code>, else the <pre>. */
  /** @param {Element} pre @returns {Element} */
  function codeElement(pre) {
    var editor = pre.querySelector(EDITOR);
    if (editor) return editor;
    var codes = pre.querySelectorAll('code');
    return codes.length === 1 ? codes[0] : pre;
  }

  /**
   * The code exactly as shown: lines joined with \n, gutters and excluded parts dropped.
   * @param {Node} root @param {string} [exclude] @returns {string}
   */
  function codeText(root, exclude) {
    var out = '';
    var pending = false;  // a line ended (block boundary); the next content starts a new line
    /** @param {string} s */
    function put(s) {
      if (pending && out && out.charAt(out.length - 1) !== '\n' && s.charAt(0) !== '\n') out += '\n';
      pending = false;
      out += s;
    }
    /** @param {Node} n */
    function walk(n) {
      if (n.nodeType === 3) { var data = /** @type {Text} */ (n).data; if (data) put(data); return; }
      if (n.nodeType !== 1) return;
      var node = /** @type {Element} */ (n);
      if (node.nodeName === 'BR') {  // ends the current line (an empty editor line is just <br>)
        if (pending && out && out.charAt(out.length - 1) !== '\n') out += '\n';
        pending = false;
        out += '\n';
        return;
      }
      if (/^(SCRIPT|STYLE|TEMPLATE|NOSCRIPT|BUTTON|svg|SVG|IMG|TEXTAREA|INPUT)$/.test(node.nodeName)) return;
      if (matches(node, exclude) || matches(node, GUTTER) || hidden(node)) return;
      var cs = getComputedStyle(node);
      if (cs.userSelect === 'none' && /^\s*\d+\s*$/.test(node.textContent || '')) return;  // a line number
      var block = matches(node, LINE) || (cs.display !== 'inline' && cs.display !== 'contents' && cs.display.indexOf('inline') !== 0);
      if (block) pending = true;
      for (var c = node.firstChild; c; c = c.nextSibling) walk(c);
      if (block) pending = true;
    }
    for (var c = root.firstChild; c; c = c.nextSibling) walk(c);
    // editors show a space as U+00A0 (Monaco, CodeMirror); copying the code gives a space
    return out.replace(/\u00a0/g, ' ').replace(/\n+$/, '');
  }

  /** @param {Element} el @returns {string | null} */
  function langFromAttrs(el) {
    /** @type {RegExpExecArray | null | ''} */
    var m = /(?:^|\s)(?:language|lang)-([\w#+.-]+)/.exec(typeof el.className === 'string' ? el.className : '');
    if (m && m[1] !== 'none' && m[1] !== 'plaintext' && m[1] !== 'text') return m[1];
    var d = el.getAttribute && (el.getAttribute('data-language') || el.getAttribute('data-lang'));
    if (d && LANG_WORD.test(d)) return d;
    var label = el.getAttribute && el.getAttribute('aria-label');
    m = label && /^(\S+) code$/i.exec(label.trim());
    return m ? m[1] : null;
  }

  /**
   * The language the page names for a code block, lower-cased, or ''.
   * @param {Element} pre @param {Element} code @param {Element} turnRoot @returns {string}
   */
  function codeLanguage(pre, code, turnRoot) {
    var inner = code.querySelectorAll('[class*="language-"], [class*="lang-"]');
    /** @type {Element[]} */
    var cands = [code, pre].concat(Array.prototype.slice.call(inner));
    for (var a = pre.parentElement, n = 0; a && n < 6 && a !== turnRoot; a = a.parentElement, n++) cands.push(a);
    for (var i = 0; i < cands.length; i++) {
      var l = langFromAttrs(cands[i]);
      if (l) return l.toLowerCase();
    }
    // a visible label in the block's header: a short word before the code, in a container that
    // holds only this code block (never a paragraph of the answer)
    for (var box = code.parentElement, k = 0; box && k < 12; box = box.parentElement, k++) {
      var codes = Array.prototype.filter.call(box.querySelectorAll('pre'), function (/** @type {Element} */ x) { return !x.querySelector('pre'); });
      if (codes.length > 1) break;
      if (box.querySelector('p, li, h1, h2, h3, h4, h5, h6, table, blockquote')) break;
      var walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
      for (var t = walker.nextNode(); t; t = walker.nextNode()) {
        if (code.contains(t)) break;
        var s = (t.nodeValue || '').trim();
        if (!s || !LANG_WORD.test(s) || NOT_A_LANG.test(s)) continue;
        var holder = t.parentElement;
        if (holder && holder.closest('button')) continue;
        return s.toLowerCase();
      }
      if (box === turnRoot) break;
    }
    return '';
  }

  ns.codeBlocks = Object.freeze({
    codeElement: codeElement,
    codeText: codeText,
    codeLanguage: codeLanguage,
    hidden: hidden,
    matches: matches,
    GUTTER: GUTTER,
    EDITOR: EDITOR,
  });
})();
