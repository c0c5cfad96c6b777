/* Wherefrom content scripts: the whole conversation seen so far (classic script; see files.json).
 *
 * Virtualised lists mount a window of turns; lazy loads prepend older ones. The Accumulator
 * stitches every window read into one conversation in reading order.
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;

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

  ns.Accumulator = Accumulator;
})();
