/* Wherefrom content scripts: open report and artifact panels (classic script; see files.json).
 *
 * A site's registry `panels` name side panels that show a document an assistant turn produced
 * (a research report, an artifact). Their text belongs to that turn.
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;
  var D = ns.dom, V = ns.visible, T = ns.turnText;

  /**
   * Open report/artifact panels of the site (registry `panels`): [{el, text, panel}], for panels
   * showing text. A panel inside a turn element is already part of that turn.
   * @param {ParentNode} root @param {WfSite} site @param {Array<Element | null | undefined>} turnEls
   * @returns {WfPanelRead[]}
   */
  function readPanels(root, site, turnEls) {
    /** @type {WfPanelRead[]} */
    var out = [];
    (site.panels || []).forEach(function (p) {
      D.queryAll(root, D.asSelector(p.selector), !!site.shadow).forEach(function (el) {
        if (turnEls.some(function (t) { return !!t && (t === el || t.contains(el) || el.contains(t)); })) return;
        var content = T.turnContent(el, 'assistant', site, { text: p.text, exclude: p.exclude });
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
      var opener = D.asSelector(p.panel.opener);
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
        target.text = V.normalise(target.text + ' ' + p.text);
        target.markdown = T.joinMarkdown([target.markdown, p.markdown]);
      }
    });
  }

  ns.panels = Object.freeze({ readPanels: readPanels, attachPanels: attachPanels });
})();
