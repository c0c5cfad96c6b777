/* Wherefrom: which chat site is this page — the one matcher, by the registry's match patterns
 * (host AND path: `https://www.bing.com/chat*` is Copilot, `https://www.bing.com/search` is not).
 *
 * A classic script (content scripts load it by file, see content/files.json) that also works as a
 * side-effect ES module import (`import '../shared/sites.js'`): it only assigns
 * globalThis.WherefromSites. The content extractor and the background both call it; both run
 * fixtures/chat-site-cases.json (tests/js/sites.test.mjs, and testkit/registry.py site_for_url in Python).
 */
(function () {
  'use strict';

  /** @param {string} s */
  function escapeRegex(s) {
    return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }

  var SCHEMES = ['*', 'http', 'https', 'file', 'ftp', 'urn'];

  /**
   * A Chrome match pattern split into scheme, host and path, or null when Chrome would refuse it:
   * the one JavaScript parser (testkit/registry.py parse_match_pattern is its Python twin; both run
   * fixtures/match-pattern-cases.json).
   * @param {string} pattern
   * @returns {WfMatchPattern | null}
   */
  function parseMatchPattern(pattern) {
    if (pattern === '<all_urls>') return { scheme: '<all_urls>', host: '', path: '' };
    var m = /^([^:/]+):\/\/([^/]*)(\/[\s\S]*)$/.exec(pattern);
    if (!m || SCHEMES.indexOf(m[1]) < 0) return null;
    var scheme = m[1], host = m[2], path = m[3];
    if (scheme === 'file') return host === '' ? { scheme: scheme, host: host, path: path } : null;
    if (host === '*') return { scheme: scheme, host: host, path: path };
    var bare = host.indexOf('*.') === 0 ? host.slice(2) : host;
    if (!bare || bare.indexOf('*') >= 0 || !/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d+)?$/.test(bare)) return null;
    return { scheme: scheme, host: host, path: path };
  }

  /**
   * The host of a match pattern without its `*.`, or '' (host `*`, <all_urls>, not a pattern).
   * @param {string} pattern
   */
  function patternHost(pattern) {
    var p = parseMatchPattern(pattern);
    if (!p || p.host === '*') return '';
    return p.host.indexOf('*.') === 0 ? p.host.slice(2) : p.host;
  }

  /**
   * A web (http, https or *) match pattern ("https://*.example.com/chat*") as a RegExp over an
   * href, or null.
   * @param {string} pattern
   * @returns {RegExp | null}
   */
  function matchPatternRegex(pattern) {
    var p = parseMatchPattern(pattern);
    if (!p || (p.scheme !== '*' && p.scheme !== 'http' && p.scheme !== 'https')) return null;
    var scheme = p.scheme === '*' ? 'https?' : p.scheme;
    var host = p.host === '*' ? '[^/]+'
      : p.host.indexOf('*.') === 0 ? '(?:[^/]+\\.)?' + escapeRegex(p.host.slice(2))
        : escapeRegex(p.host);
    var path = p.path.split('*').map(escapeRegex).join('.*');
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

  globalThis.WherefromSites = Object.freeze({
    siteFor: siteFor, matchPatternRegex: matchPatternRegex, parseMatchPattern: parseMatchPattern, patternHost: patternHost,
  });
})();
