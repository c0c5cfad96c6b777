/* Wherefrom content scripts: the extractor, one interface over its parts (classic script).
 *
 * Everything site-specific comes from the registry (extension/sites/registry.json, loaded as
 * registry.generated.js). The parts, each in its own file (see files.json for the order):
 *   - dom.js: selectors and queries (open shadow roots too);
 *   - visible.js: the text a reader sees (visibleText);
 *   - layouts.js: a registry layout's turn elements and roles;
 *   - turntext.js: a turn's {text, markdown} from one walk (the Markdown hand-off);
 *   - panels.js: open report/artifact panels, attached to their turn;
 *   - generic.js: the generic conversation reader, which knows no site;
 *   - detect.js: which reader finds the page's turns;
 *   - misses.js, coverage.js: no silent partial capture (miss kinds, lost text);
 *   - accumulator.js: turns across virtualised windows, keyed by native id or content.
 * This file adds the registry entry for a URL (siteFor) and freezes the interface capture.js,
 * composer.js and pagedata.js use. No side effects.
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;

  // One matcher for content and background: shared/sites.js (loaded before this file).
  var S = globalThis.WherefromSites;

  /**
   * The registry entry whose match patterns cover href, or null (then nothing runs).
   * @param {string} href @param {{sites: WfSite[]}} [registry] @returns {WfSite | null}
   */
  function siteFor(href, registry) {
    return S.siteFor(href, registry || ns.registry || { sites: [] });
  }

  var D = ns.dom, V = ns.visible, L = ns.layouts, M = ns.misses;
  ns.extractor = Object.freeze({
    matchPatternRegex: S.matchPatternRegex,
    siteFor: siteFor,
    asSelector: D.asSelector,
    queryAll: D.queryAll,
    visibleText: V.visibleText,
    normalise: V.normalise,
    excludeFor: L.excludeFor,
    turnElements: L.turnElements,
    countMatches: L.countMatches,
    turnContent: ns.turnText.turnContent,
    readMounted: ns.detect.readMounted,
    readPanels: ns.panels.readPanels,
    pathPattern: M.pathPattern,
    missKind: M.missKind,
    isStreaming: L.isStreaming,
    detect: ns.detect.detect,
    Accumulator: ns.Accumulator,
  });
})();
