/* Wherefrom content scripts: the signals that name a speaker, for the generic reader (classic script).
 *
 * The generic reader (content/generic.js) knows no site. What names a side on a page it has never
 * seen, never a class name, an id or a test id (a redeploy renames those):
 *   - author/role attributes: a value naming a side (`data-message-author-role="user"`,
 *     `data-turn-role="Model"`, `data-content="ai-message"`), or a name naming one with a true
 *     value (`data-user-message-bubble="true"`);
 *   - custom element names (`<user-query>`, `<model-response>`);
 *   - speaker labels, often visually hidden: "You said", "Copilot said:", "Claude responded: …"
 *     (an aria-label or a heading of that form).
 * An attribute that names both sides on the page is an author-role attribute; when one exists, the
 * attributes naming one side only (an icon's "Good response", a "Model run stats" tooltip) are noise.
 * Labels a reader does not see as message text are also found by structure (speakerLabels): a
 * heading that opens a turn and ends in a colon ("나의 말:"), or repeats the message after its
 * colon, and the same short opening text in every turn of a side ("あなたのプロンプト").
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;
  var V = ns.visible;

  var USER = /^(user|human|me|you|self|prompt|query|question|request|customer|mine|own|sent|outgoing)$/;
  var BOT = /^(assistant|bot|ai|model|response|answer|reply|gpt|chatbot|agent|llm|copilot|gemini|claude|incoming)$/;
  // attribute values naming controls, not messages ("user-menu-button", "prompt-copy-button")
  var CONTROL = /^(menu|button|btn|avatar|icon|profile|picture|selector|switcher|dropdown|copy|edit|toggle|actions?|banner|input|composer|settings|feedback|tooltip|label|name|logo|footer|header|upgrade|plan|mode|tabs?|chip|suggestions?|stats?|units?)$/;
  var SKIP_ATTRS = /^(class|id|style|href|src|srcset|title|alt|name|for|type|value|placeholder|tabindex|lang|dir|jsaction|jslog|jscontroller|jsname|d|viewbox|fill|stroke|xmlns|width|height|data-testid|aria-.*)$/;
  var OUTSIDE = 'nav, aside, header, footer, form, [role="navigation"], [role="complementary"], [role="banner"], ' +
    '[role="contentinfo"], [role="dialog"], [contenteditable="true"], textarea, head';
  // no speaker is named inside drawings, formulas or code
  var INERT = 'svg, math, pre, code, [aria-hidden="true"]';
  var SAID = '(said|wrote|asked|responded|replied|answered)';
  var LABEL_USER = new RegExp('^((you|user)( ' + SAID + ')?|(me|i) ' + SAID + ')\\s*[:：]?$', 'i');
  var LABEL_BOT = new RegExp('^(.{1,24}?) ' + SAID + '\\s*[:：]?$', 'i');
  // a heading holding the label and the message after it ("Claude responded: Here is …")
  var LABEL_LEAD = new RegExp('^(.{1,24}?) ' + SAID + '\\s*[:：]', 'i');
  var HEADING = /^h[1-6]$/;

  /** The words of a name or value: "dataMessageAuthor-role_x" -> [data, message, author, role, x]. */
  /** @param {string} s @returns {string[]} */
  function words(s) {
    return String(s).replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);
  }

  /** @param {string[]} w @returns {WfRole | null} the side a list of words names */
  function roleOfWords(w) {
    if (!w.length || w.some(function (x) { return CONTROL.test(x); })) return null;
    var u = w.some(function (x) { return USER.test(x); });
    var b = w.some(function (x) { return BOT.test(x); });
    return u === b ? null : u ? 'user' : 'assistant';
  }

  /** @param {string} value @returns {WfRole | null} the side a short value names */
  function roleOfValue(value) {
    if (!value || value.length > 40) return null;
    return roleOfWords(words(value));
  }

  /** @param {string} who @returns {WfRole} */
  function whoRole(who) { return /^(you|user|me|i)$/i.test(who) ? 'user' : 'assistant'; }

  /** @param {Element} el @returns {boolean} does text run beside el in its parent (a word of a sentence)? */
  function amidText(el) {
    return [el.previousSibling, el.nextSibling].some(function (n) {
      return !!n && n.nodeType === 3 && V.normalise(/** @type {Text} */ (n).data) !== '';
    });
  }

  /**
   * A speaker label's side ("You said" / "X said"); a word of a sentence (inside a paragraph or
   * list item, or with text on either side) names no speaker.
   * @param {Element} el @returns {WfRole | null}
   */
  function labelRole(el) {
    if (el.closest('p, li, td, th, blockquote') || amidText(el)) return null;
    var label = el.getAttribute('aria-label');
    var text = label || (el.children.length ? '' : V.normalise(el.textContent || ''));
    if (text && text.length <= 30) {
      if (LABEL_USER.test(text)) return 'user';
      var m = LABEL_BOT.exec(text);
      if (m) return whoRole(m[1]);
    }
    if (HEADING.test(el.localName)) {
      var lead = LABEL_LEAD.exec(V.normalise(el.textContent || ''));
      if (lead) return whoRole(lead[1]);
    }
    return null;
  }

  /**
   * Every role signal in root: [{el, role, key, label}] in tree order; `key` is what kind of
   * signal it is (an attribute name, `tag`, `label`).
   * @param {ParentNode} root @returns {WfSignal[]}
   */
  function signals(root) {
    /** @type {WfSignal[]} */
    var out = [];
    var all = root.querySelectorAll('body *');
    for (var i = 0; i < all.length; i++) {
      var el = all[i];
      if (el.closest(OUTSIDE) || el.closest(INERT)) continue;
      /** @type {WfRole | null} */
      var role = null, key = '';
      var tag = el.localName;
      if (tag.indexOf('-') > 0 && (role = roleOfValue(tag))) key = 'tag';
      for (var a = 0; !role && a < el.attributes.length; a++) {
        var at = el.attributes[a];
        if (SKIP_ATTRS.test(at.name)) continue;
        role = at.value === 'true' && at.name.indexOf('data-') === 0 ? roleOfWords(words(at.name.slice(5))) : roleOfValue(at.value);
        if (role) key = 'attr:' + at.name;
      }
      var lab = labelRole(el);
      if (!role && lab) { role = lab; key = 'label'; }
      if (role) out.push({ el: el, role: role, key: key, label: !!lab });
    }
    return paired(out);
  }

  /**
   * When some kind of signal names both sides (an author-role attribute, custom elements of both
   * sides), the kinds naming one side only are left out (labels are kept: they are not message text).
   * @param {WfSignal[]} sigs @returns {WfSignal[]}
   */
  function paired(sigs) {
    /** @type {Record<string, number>} */
    var sides = {};
    sigs.forEach(function (s) { sides[s.key] = (sides[s.key] || 0) | (s.role === 'user' ? 1 : 2); });
    var both = Object.keys(sides).filter(function (k) { return k !== 'label' && sides[k] === 3; });
    if (!both.length) return sigs;
    return sigs.filter(function (s) { return s.label || both.indexOf(s.key) >= 0; });
  }

  /** @param {Element} row @param {number} max @returns {Element[]} the row's shown elements holding text of their own, in order (up to `max`) */
  function leadingLeaves(row, max) {
    /** @type {Element[]} */
    var out = [];
    var all = row.querySelectorAll('*');
    for (var i = 0; i < all.length && out.length < max; i++) {
      var el = all[i];
      if (el.closest(INERT) || el.closest('button, [role="button"], [role="separator"], [role="status"]') || !ns.dom.shown(el)) continue;
      var own = '';
      for (var c = el.firstChild; c; c = c.nextSibling) if (c.nodeType === 3) own += /** @type {Text} */ (c).data;
      if (V.normalise(own)) out.push(el);
    }
    return out;
  }

  /** @param {Element} el */
  function text(el) { return V.normalise(el.textContent || ''); }

  /**
   * Speaker labels found by structure in the rows of a thread ([{el: row, role}]): elements that
   * name who speaks and hold none of the message. A heading opening a row and ending in a colon,
   * or holding "label: the message's start" right before the message; the same short opening text in two or more rows of
   * one side while the rows hold more.
   * @param {Array<{el: Element, role: WfRole}>} rows @returns {Set<Element>}
   */
  function speakerLabels(rows) {
    /** @type {Set<Element>} */
    var out = new Set();
    /** @type {Record<string, Array<{el: Element, text: string}>>} */
    var firsts = {};
    rows.forEach(function (r) {
      var all = text(r.el);
      var leaves = leadingLeaves(r.el, 1);
      var first = leaves[0];
      if (!first) return;
      var head = first.closest('h1, h2, h3, h4, h5, h6');
      var t = text(head && r.el.contains(head) ? head : first);
      if (head && r.el.contains(head) && head !== r.el) {
        var colon = t.search(/[:：]/);
        var rest = colon >= 0 ? t.slice(colon + 1).trim() : '';
        var after = all.slice(all.indexOf(t) + t.length);
        if (colon >= 0 && colon < 30 && (!rest || after.trim().indexOf(rest.slice(0, 20)) === 0)) { out.add(head); return; }
      }
      if (t.length <= 30 && t.length < all.length) (firsts[r.role + '\u0000' + t] = firsts[r.role + '\u0000' + t] || []).push({ el: first, text: t });
    });
    Object.keys(firsts).forEach(function (k) {
      if (firsts[k].length >= 2) firsts[k].forEach(function (f) { out.add(f.el); });
    });
    return out;
  }

  ns.genericSignals = Object.freeze({ signals: signals, speakerLabels: speakerLabels, OUTSIDE: OUTSIDE });
})();
