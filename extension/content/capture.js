/* Wherefrom content scripts: the capture runtime (classic script, loaded last; see files.json).
 *
 * On a page the registry does not cover, nothing happens: no observer, no listener, no message.
 * On a chat page:
 *   - a MutationObserver marks the page dirty; the first mutation after a quiet period schedules
 *     one setTimeout (the debounce). Nothing is periodic: when the page is idle no timer exists.
 *   - each tick reads the mounted turns with the first matching layout alternative and merges
 *     them into an Accumulator (native ids, or content keys, across virtualised windows);
 *   - the turns are sent (CAPTURE_TURNS) while a reply grows (settled: false) and once more when
 *     it has settled: the registry's done signal says so, or (no signal) the text stopped changing;
 *   - once per conversation, when the layout is virtualised or lazily loaded, the registry's
 *     scroller is walked to the top and back, collecting, and the reader's position restored;
 *   - the page's own data (registry `page_data`, pagedata.js) is the second source where the DOM
 *     shows fewer turns than it (share pages);
 *   - no silent partial capture: a conversation page whose settled capture has no turns, turns
 *     of one role only or an empty turn sends SELECTOR_MISS with the kind (once per kind and page).
 * The background takes the URL and title from sender.tab: no message here carries them.
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;
  var X = ns.extractor;
  var M = ns.messages;

  var DEBOUNCE_MS = 250;     // first read after a burst of mutations
  var QUIET_MS = 1500;       // no mutation for this long = text is stable (no done signal needed)
  var DONE_MS = 30;          // after the done signal: the last mutations of the same frame, then read

  var site = X.siteFor(location.href);

  /** @param {string} type @param {Record<string, unknown>} payload */
  function send(type, payload) {
    try {
      var r = chrome.runtime.sendMessage({ type: type, payload: payload });
      if (r && typeof r.catch === 'function') r.catch(function () {});
    } catch (e) { /* extension reloaded: this page's script is orphaned */ }
  }

  /** @param {WfSite} site */
  function Runtime(site) {
    this.site = site;
    this.acc = new X.Accumulator();
    /** @type {ReturnType<typeof setTimeout> | null} */
    this.timer = null;
    this.timerAt = 0;
    this.lastMutation = 0;
    this.lastSent = '';
    /** @type {WfFoundLayout | null} */
    this.layout = null;
    /** @type {Record<string, boolean>} */
    this.missesSent = {};
    /** @type {string[]} */
    this.tried = [];
    /** @type {string | null} */
    this.source = null;
    this.collecting = false;
    this.collected = false;
    this.href = location.href;
    /** @type {MutationObserver | null} */
    this.observer = null;
    /** @type {Element | null} */
    this.container = null;
    /** @type {WeakSet<Node>} */
    this.observed = new WeakSet();
    this.phase = 'starting';
    /** the maintainers' switch (chrome.storage.local captureMode "generic"): the generic reader only */
    this.generic = false;
    /** @type {WfFound | null} the last read of the page */
    this.lastFound = null;
  }

  Runtime.prototype.start = function () {
    var self = this;
    var attrs = ['hidden', 'class', 'style'];
    this.site.layouts.forEach(function (l) {
      if (l.streaming && l.streaming.attr) attrs.push(l.streaming.attr);
    });
    this.observer = new MutationObserver(function (records) {
      if (self.relevant(records)) self.onMutation(records);
    });
    this.observerOptions = { childList: true, subtree: true, characterData: true, attributes: true, attributeFilter: attrs };
    this.observe(document);
    this.onMutation(null);
  };

  /** @param {Node} root */
  Runtime.prototype.observe = function (root) {
    if (this.observed.has(root)) return;
    this.observed.add(root);
    /** @type {MutationObserver} */ (this.observer).observe(root, this.observerOptions);
  };

  /** Open shadow roots (legacy Copilot) are observed as they appear. */
  Runtime.prototype.observeShadows = function () {
    if (!this.site.shadow) return;
    var self = this;
    X.queryAll(document, '*', true).forEach(function (el) {
      if (el.shadowRoot) self.observe(el.shadowRoot);
    });
  };

  /**
   * Once the thread is found, only changes in it (or around it: a new thread replacing it) and
   * the streaming attribute wake the runtime — an animated sidebar or banner elsewhere on the
   * page does not keep it ticking.
   * @param {MutationRecord[]} records
   */
  Runtime.prototype.relevant = function (records) {
    var box = this.container;
    if (!box || !box.isConnected || this.site.shadow) return true;
    if (this.streamEnded(records)) return true;   // the stop button (outside the thread) went away
    var attr = this.layout && this.layout.streaming && this.layout.streaming.attr;
    for (var i = 0; i < records.length; i++) {
      var r = records[i];
      var node = r.target;
      if (attr && r.attributeName === attr) return true;
      if (box.contains(node) || (node.contains && node.contains(box))) return true;
    }
    return false;
  };

  /**
   * The nearest element holding every mounted turn (the thread).
   * @param {Element[]} els @returns {Element | null}
   */
  function commonAncestor(els) {
    var box = els[0] && els[0].parentElement;
    while (box && !els.every(function (e) { return /** @type {Element} */ (box).contains(e); })) box = box.parentElement;
    return box || null;
  }

  /** @param {MutationRecord[] | null} records */
  Runtime.prototype.onMutation = function (records) {
    this.lastMutation = Date.now();
    if (this.collecting) return;
    // the reply's done signal: read at once (DONE_MS), not after a debounce or the "still growing" wait
    if ((this.timer === null || this.timerAt - Date.now() > DONE_MS) && this.streamEnded(records)) {
      if (this.timer !== null) clearTimeout(this.timer);
      this.timer = null;
      this.schedule(DONE_MS);
      return;
    }
    if (this.timer === null) this.schedule(DEBOUNCE_MS);
  };

  /** @param {number} wait */
  Runtime.prototype.schedule = function (wait) {
    var self = this;
    this.timerAt = Date.now() + wait;
    this.timer = setTimeout(function () { self.timer = null; self.tick(); }, wait);
  };

  /**
   * While a reply grows: did these mutations end it (the layout's streaming signal went away)?
   * @param {MutationRecord[] | null} records @returns {boolean}
   */
  Runtime.prototype.streamEnded = function (records) {
    var spec = this.phase === 'growing' && this.layout && this.layout.streaming;
    if (!spec || !records) return false;
    var attr = spec.attr;
    if (attr && records.some(function (r) { return r.attributeName === attr; })) return true;
    return !!spec.selector && !X.queryAll(document, X.asSelector(spec.selector), !!this.site.shadow).length;
  };

  /** Is the page's URL one that must show turns (registry `conversation`, else a composer)? */
  Runtime.prototype.shouldHaveTurns = function () {
    var c = this.site.conversation;
    if (c) return new RegExp(c).test(location.pathname + location.search);
    return !!ns.composer.find(this.site);
  };

  /**
   * Read the page: the DOM first; the page's own data (registry `page_data`, share pages) when
   * the DOM shows no turns or fewer turns than that data. Returns the extractor's find
   * ({layout, turns, tried, empty, source}); merged into the accumulator when it has turns.
   * @returns {WfFound}
   */
  Runtime.prototype.read = function () {
    var found = X.detect(document, this.site, { generic: this.generic });
    var data = ns.pageData && this.site.page_data ? ns.pageData.read(document, this.site) : null;
    if (data && ns.detect.preferPageData(found, data.turns)) {
      found = {
        layout: { id: 'page-data:' + data.reader.id, lazy: 'none' },
        turns: data.turns.map(function (t) { return { el: null, role: t.role, text: t.text, markdown: t.markdown, id: t.id, streaming: false }; }),
        tried: found.tried.concat('page-data:' + data.reader.id), empty: [], source: 'page-data',
      };
    } else if (data) {
      found.tried = found.tried.concat('page-data:' + data.reader.id);
    }
    this.tried = found.tried;
    this.lastFound = found;
    if (!found.turns.length) return found;
    this.layout = found.layout;
    this.source = found.source;
    this.container = commonAncestor(/** @type {Element[]} */ (found.turns.map(function (t) { return t.el; }).filter(Boolean)));
    this.acc.merge(found.turns);
    return found;
  };

  /**
   * No silent partial capture: once a conversation page has settled, a capture with no turns,
   * turns of one role only or an empty turn records one miss (its kind, the site, the layouts
   * tried, the URL's path pattern; never page text). One miss per kind per page.
   * @param {WfFound} found
   */
  Runtime.prototype.checkSettled = function (found) {
    if (!this.shouldHaveTurns()) return;
    var turns = this.acc.turns();
    var miss = ns.coverage.settledMiss(document, this.site, found, turns, { generic: this.generic });
    var kind = miss && miss.kind;
    if (!kind || this.missesSent[kind]) return;
    this.missesSent[kind] = true;
    send(M.SELECTOR_MISS, {
      site: this.site.id,
      kind: kind,
      layouts: (found.tried || []).slice(0, 20),
      path: X.pathPattern(location.pathname),
      detail: /** @type {{kind: string, detail: string}} */ (miss).detail,
    });
  };

  Runtime.prototype.tick = function () {
    var self = this;
    if (location.href !== this.href) this.reset();
    this.observeShadows();
    var found = this.read();
    var quiet = Date.now() - this.lastMutation >= QUIET_MS;
    if (!found.turns.length) {
      this.phase = quiet ? 'idle' : 'waiting';
      if (quiet) this.checkSettled(found);
      if (!quiet) this.again();
      return;
    }
    var streaming = found.turns.some(function (t) { return t.streaming; });
    var layout = /** @type {WfFoundLayout} */ (found.layout);  // turns were found, so by a layout
    var signal = !!layout.streaming;
    var settled = !streaming && (signal || quiet);
    this.emit(settled);
    if (settled && !this.collected && layout.lazy && layout.lazy !== 'none') {
      this.collected = true;
      this.scrollCollect(layout).then(function () { self.checkSettled(found); });
      return;
    }
    if (settled) this.checkSettled(found);
    this.phase = settled ? 'idle' : 'growing';
    if (!settled) this.again();
  };

  /** While a reply is still growing, look again once more (a single timeout, not a poll). */
  Runtime.prototype.again = function () {
    if (this.timer !== null) return;
    this.schedule(Math.max(DEBOUNCE_MS, QUIET_MS - (Date.now() - this.lastMutation)));
  };

  /** @param {boolean} settled */
  Runtime.prototype.emit = function (settled) {
    var turns = this.acc.turns();
    var sig = JSON.stringify([turns, settled]);
    if (sig === this.lastSent) return;
    this.lastSent = sig;
    send(M.CAPTURE_TURNS, { site: this.site.id, turns: turns, settled: settled });
  };

  Runtime.prototype.reset = function () {
    this.href = location.href;
    this.acc = new X.Accumulator();
    this.lastSent = '';
    this.missesSent = {};
    this.collected = false;
  };

  // ---------------------------------------------------------------- scroll and collect

  /** @returns {Promise<void>} */
  function frame() {
    return new Promise(function (resolve) { requestAnimationFrame(function () { resolve(); }); });
  }

  /**
   * Resolve after the DOM has been quiet for `quiet` ms (or `max` ms at most).
   * @param {number} quiet @param {number} max @returns {Promise<void>}
   */
  function settleDom(quiet, max) {
    return new Promise(function (resolve) {
      var start = Date.now();
      var last = Date.now();
      var obs = new MutationObserver(function () { last = Date.now(); });
      obs.observe(document, { childList: true, subtree: true, characterData: true });
      (function check() {
        var now = Date.now();
        if (now - last >= quiet || now - start >= max) { obs.disconnect(); resolve(); return; }
        setTimeout(check, Math.min(quiet, 50));
      })();
    });
  }

  /** @param {WfSite} site @param {WfLayoutPart} layout @returns {Element | null} */
  function scrollerFor(site, layout) {
    var sel = X.asSelector(layout.scroller || site.scroller);
    if (!sel) return null;
    var list = X.queryAll(document, sel, !!site.shadow);
    return list.find(function (el) { return el.scrollHeight > el.clientHeight; }) || list[0] || null;
  }

  /**
   * The first turn element visible in the scroller, with its offset from the scroller's top.
   * @param {Element} scroller @param {WfSite} site @param {WfLayoutPart} layout
   * @returns {{el: Element, offset: number} | null}
   */
  function anchorOf(scroller, site, layout) {
    var top = scroller.getBoundingClientRect().top;
    var els = X.turnElements(document, site, layout);
    for (var i = 0; i < els.length; i++) {
      var r = els[i].el.getBoundingClientRect();
      if (r.bottom > top) return { el: els[i].el, offset: r.top - top };
    }
    return null;
  }

  /**
   * Walk the scroller to the top in steps of half a viewport (windows overlap, so they stitch),
   * waiting at the top for lazily loaded older turns, then back down; collect at every step;
   * put the reader back exactly where they were.
   * @param {WfLayoutPart} layout @returns {Promise<void>}
   */
  Runtime.prototype.scrollCollect = function (layout) {
    var self = this;
    var scroller = scrollerFor(this.site, layout);
    if (!scroller) { this.phase = 'idle'; return Promise.resolve(); }
    this.collecting = true;
    this.phase = 'collecting';
    var startTop = scroller.scrollTop;
    var startFromBottom = scroller.scrollHeight - scroller.scrollTop;
    var anchor = anchorOf(scroller, this.site, layout);
    var step = Math.max(50, Math.floor(scroller.clientHeight / 2));
    var lazy = layout.lazy === 'lazy-backward';

    function collectNow() { var f = X.detect(document, self.site); if (f.turns.length) self.acc.merge(f.turns); }

    /** @param {Element} scroller the same scroller, known here not to be null */
    async function run(scroller) {
      var stuck = 0;
      for (var guard = 0; guard < 2000; guard++) {     // up
        var before = scroller.scrollTop, height = scroller.scrollHeight;
        scroller.scrollTop = before - step;
        scroller.dispatchEvent(new Event('scroll'));
        await frame();
        await settleDom(120, lazy && scroller.scrollTop === before ? 1500 : 600);
        collectNow();
        if (scroller.scrollTop === before && scroller.scrollHeight === height) {
          if (++stuck >= (lazy ? 2 : 1)) break;
        } else stuck = 0;
      }
      for (guard = 0; guard < 2000; guard++) {         // down
        var b = scroller.scrollTop;
        scroller.scrollTop = b + step;
        scroller.dispatchEvent(new Event('scroll'));
        await frame();
        await settleDom(80, 600);
        collectNow();
        if (scroller.scrollTop === b) break;
      }
      // restore: prepended history keeps the distance from the bottom; else the same scrollTop
      scroller.scrollTop = lazy ? scroller.scrollHeight - startFromBottom : startTop;
      scroller.dispatchEvent(new Event('scroll'));
      await frame();
      if (anchor && anchor.el.isConnected) {
        var top = scroller.getBoundingClientRect().top;
        var delta = anchor.el.getBoundingClientRect().top - top - anchor.offset;
        if (Math.abs(delta) >= 1) scroller.scrollTop += delta;
      }
      await settleDom(80, 600);
      collectNow();
    }

    return run(scroller).catch(function () {}).then(function () {
      self.collecting = false;
      self.phase = 'idle';
      self.emit(true);
    });
  };

  // ---------------------------------------------------------------- start

  if (!site) {
    Object.freeze(ns);
    return;  // not a registered chat page: nothing at all happens here
  }

  var runtime = new Runtime(site);
  var adapter = ns.adapters[site.id];
  if (adapter && adapter.init) adapter.init(site);

  try {
    chrome.runtime.onMessage.addListener(function (msg, sender, sendResponse) {
      if (!msg || msg.type !== M.INSERT_TEXT) return false;
      if (!sender || sender.id !== chrome.runtime.id) return false;  // only our own background
      var text = msg.payload ? msg.payload.text : msg.text;
      sendResponse(ns.composer.insert(/** @type {WfSite} */ (site), text));
      return false;
    });
  } catch (e) { /* no runtime (orphaned script) */ }

  ns.runtime = Object.freeze({
    site: site,
    /** For tests and diagnostics: where the runtime is and what it holds. */
    state: function () {
      var found = runtime.lastFound;
      var covered = found && found.turns.length ? ns.coverage.covered(document, runtime.site, found, runtime.acc.turns()) : null;
      return {
        phase: runtime.phase, timer: runtime.timer !== null, collecting: runtime.collecting,
        layout: runtime.layout && runtime.layout.id, source: runtime.source, tried: runtime.tried,
        turns: runtime.acc.turns(), generic: runtime.generic,
        coverage: covered ? covered.share : null,
      };
    },
    scrollCollect: function () {
      return runtime.layout ? runtime.scrollCollect(runtime.layout) : Promise.resolve();
    },
  });
  Object.freeze(ns);

  function begin() {
    if (document.readyState === 'loading') {
      document.addEventListener('DOMContentLoaded', function () { runtime.start(); }, { once: true });
    } else {
      runtime.start();
    }
  }
  // the maintainers' switch: captureMode "generic" in chrome.storage.local forces the generic
  // reader (a selector-regression run: what would survive if every registry selector broke)
  try {
    chrome.storage.local.get('captureMode').then(function (r) {
      runtime.generic = !!r && r.captureMode === 'generic';
      begin();
    }, begin);
  } catch (e) { begin(); }
})();
