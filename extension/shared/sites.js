/* Wherefrom: which chat site is this page — the one matcher, by the registry's match patterns
 * (host AND path: `https://www.bing.com/chat*` is Copilot, `https://www.bing.com/search` is not).
 *
 * A classic script (content scripts load it by file, see content/files.json) that also works as a
 * side-effect ES module import (`import '../shared/sites.js'`): it only assigns
 * globalThis.WherefromSites. The content extractor and the background both call it; both run
 * fixtures/chat-site-cases.json (tests/js/sites.test.mjs, and e2e/sites.py site_for_url in Python).
 */
(function () {
  'use strict';

  /** @param {string} s */
  function escapeRegex(s) {
    return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }

  /**
   * A Chrome match pattern ("https://*.example.com/chat*") as a RegExp over an href, or null.
   * @param {string} pattern
   * @returns {RegExp | null}
   */
  function matchPatternRegex(pattern) {
    var m = /^(\*|https?):\/\/([^/]+)(\/.*)$/.exec(pattern);
    if (!m) return null;
    var scheme = m[1] === '*' ? 'https?' : m[1];
    var host = m[2] === '*' ? '[^/]+'
      : m[2].indexOf('*.') === 0 ? '(?:[^/]+\\.)?' + escapeRegex(m[2].slice(2))
        : escapeRegex(m[2]);
    var path = m[3].split('*').map(escapeRegex).join('.*');
    return new RegExp('^' + scheme + '://' + host + '(?::\\d+)?' + path + '$');
  }

  /**
   * @typedef {{id: string, matches: string[]}} SiteLike
   */

  /**
   * The registry's chat site for a page URL (its fragment ignored), or null.
   * @template {SiteLike} S
   * @param {string} href
   * @param {{sites: S[]} | S[]} registry
   * @returns {S | null}
   */
  function siteFor(href, registry) {
    var sites = Array.isArray(registry) ? registry : (registry && registry.sites) || [];
    var url = String(href).split('#')[0];
    for (var i = 0; i < sites.length; i++) {
      var pats = sites[i].matches || [];
      for (var j = 0; j < pats.length; j++) {
        var re = matchPatternRegex(pats[j]);
        if (re && re.test(url)) return sites[i];
      }
    }
    return null;
  }

  globalThis.WherefromSites = Object.freeze({ siteFor: siteFor, matchPatternRegex: matchPatternRegex });
})();
