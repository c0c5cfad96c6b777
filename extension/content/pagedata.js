/* Wherefrom content scripts: the page's own data as a second source of turns (classic script).
 *
 * Some sites ship the whole conversation inside the page: ChatGPT share pages stream it as
 * data in <script> elements (React Router's turbo-stream, earlier Next.js __NEXT_DATA__ JSON).
 * When the DOM shows no turns, or fewer than that data, capture.js takes the turns from here —
 * read from script elements' text already in the document: no network request, no page-world
 * code, the same governance and the same turn shape as the DOM extractor.
 *
 * Everything site-specific is data (registry `page_data`); this file is the one generic reader:
 *   - find scripts (`script` selector) whose text holds `marker`;
 *   - decode them (`format`: "json" = the script is JSON; "enqueue" = the JSON string literal
 *     passed to `…enqueue("…")`, itself turbo-stream encoded; "assign" = the object literal
 *     assigned after `marker`, e.g. Kimi's `window.HYDRATION_INIT_STATE={…}`, read as JSON);
 *   - walk `messages` (a dotted path; `*` = every item of a list or value of an object);
 *   - per message: role at `role` (mapped by `roles`, others skipped), text at `text` (every
 *     string found there, or the strings of a list, joined; as stored it is the turn's Markdown,
 *     whitespace-collapsed its text), native id at `native_id`; a message whose `skip` path is
 *     truthy is hidden from the conversation; with `join: "consecutive"` messages of one role
 *     that follow each other are one turn (as the page shows them in one turn container).
 * A reader applies only on the URL paths its `paths` RegExp allows (share pages), where the data
 * is the whole, fixed conversation. A script already decoded is not decoded again.
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;

  // turbo-stream's special values (negative indexes): hole, NaN, -Infinity, -0, null, Infinity, undefined
  /** @type {Record<string, number | null | undefined>} */
  var SPECIAL = { '-1': undefined, '-2': NaN, '-3': -Infinity, '-4': -0, '-5': null, '-6': Infinity, '-7': undefined };

  /**
   * Decode a turbo-stream flat list (React Router / Remix): values are indexes into the list,
   * objects are {"_<keyIndex>": valueIndex}, arrays hold indexes; a few tagged forms are kept
   * as plain values (dates, ...). Cycles resolve to the object being built.
   * @param {unknown[]} flat @returns {unknown}
   */
  function decodeTurboStream(flat) {
    /** @type {Map<number, unknown>} */
    var memo = new Map();
    /** @param {unknown} i @returns {unknown} */
    function val(i) {
      if (typeof i !== 'number') return i;
      if (i < 0) return SPECIAL[String(i)];
      if (memo.has(i)) return memo.get(i);
      var raw = flat[i];
      if (Array.isArray(raw)) {
        if (typeof raw[0] === 'string' && raw.length <= 3 && /^[A-Z]$/.test(raw[0])) {
          memo.set(i, raw[1]);   // tagged value (D date, S symbol, Y/Z promises...): its payload
          return raw[1];
        }
        /** @type {unknown[]} */
        var arr = [];
        memo.set(i, arr);
        raw.forEach(function (x) { arr.push(val(x)); });
        return arr;
      }
      if (raw && typeof raw === 'object') {
        var rec = /** @type {Record<string, unknown>} */ (raw);
        /** @type {Record<string, unknown>} */
        var obj = {};
        memo.set(i, obj);
        Object.keys(rec).forEach(function (k) {
          var key = k.charAt(0) === '_' ? flat[Number(k.slice(1))] : k;
          if (typeof key === 'string') obj[key] = val(rec[k]);
        });
        return obj;
      }
      memo.set(i, raw);
      return raw;
    }
    return flat.length ? val(0) : null;
  }

  /**
   * The JSON string literal passed to `marker` in a script's text, parsed; else null.
   * @param {string} text @param {string} marker @returns {unknown} JSON from the page
   */
  function enqueuedValue(text, marker) {
    var at = text.indexOf(marker);
    if (at < 0) return null;
    var i = at + marker.length;
    while (i < text.length && /\s/.test(text.charAt(i))) i++;
    if (text.charAt(i) !== '"') return null;
    var j = i + 1;
    for (; j < text.length; j++) {
      var c = text.charAt(j);
      if (c === '\\') { j++; continue; }
      if (c === '"') break;
    }
    try {
      var inner = JSON.parse(text.slice(i, j + 1));
      return JSON.parse(inner);
    } catch (e) {
      return null;
    }
  }

  /**
   * The object literal assigned after `marker` (`window.STATE={...}`), read as JSON: outside
   * strings, `undefined` becomes null and `BigInt("n")` its digits as a string (a serialised
   * store). Never evaluated. Null when it is not JSON after that.
   * @param {string} text @param {string} marker @returns {unknown} JSON from the page
   */
  function assignedValue(text, marker) {
    var at = text.indexOf(marker);
    if (at < 0) return null;
    var src = text.slice(at + marker.length).trim().replace(/;\s*$/, '');
    var out = '';
    var inString = false;
    for (var i = 0; i < src.length; i++) {
      var c = src.charAt(i);
      if (inString) {
        out += c;
        if (c === '\\') { out += src.charAt(++i); continue; }
        if (c === '"') inString = false;
        continue;
      }
      if (c === '"') { inString = true; out += c; continue; }
      if (src.startsWith('undefined', i) && !/[\w$]/.test(src.charAt(i + 9))) { out += 'null'; i += 8; continue; }
      var big = /^BigInt\("(-?\d+)"\)/.exec(src.slice(i, i + 40));
      if (big) { out += '"' + big[1] + '"'; i += big[0].length - 1; continue; }
      out += c;
    }
    try {
      return JSON.parse(out);
    } catch (e) {
      return null;
    }
  }

  /**
   * Every value at a dotted path ("a.*.b"); `*` fans out over a list's items or an object's values.
   * @param {unknown} value @param {string | undefined} path @returns {unknown[]}
   */
  function pathValues(value, path) {
    /** @type {unknown[]} */
    var out = [value];
    String(path || '').split('.').filter(Boolean).forEach(function (step) {
      /** @type {unknown[]} */
      var next = [];
      out.forEach(function (value) {
        if (value === null || typeof value !== 'object') return;
        var v = /** @type {Record<string, unknown>} */ (value);
        if (step === '*') {
          (Array.isArray(v) ? v : Object.keys(v).map(function (k) { return v[k]; })).forEach(function (x) { next.push(x); });
        } else if (Object.prototype.hasOwnProperty.call(v, step)) next.push(v[step]);
      });
      out = next;
    });
    return out;
  }

  /** @param {unknown} v @returns {string} */
  function textOf(v) {
    if (typeof v === 'string') return v;
    if (Array.isArray(v)) return v.filter(function (x) { return typeof x === 'string'; }).join('\n\n');
    return '';
  }

  /** @type {WeakMap<Element, {spec: WfPageDataSpec, length: number, turns: WfPageTurn[]}>} */
  var decoded = new WeakMap();   // script element -> {spec, length, turns}

  /**
   * The turns one `page_data` reader finds in the document: [{role, text, id}] in data order.
   * @param {Document} doc @param {WfPageDataSpec} spec @returns {WfPageTurn[]}
   */
  function readWith(doc, spec) {
    var X = ns.extractor;
    /** @type {Element[]} */
    var scripts = Array.prototype.slice.call(doc.querySelectorAll(X.asSelector(spec.script || 'script')));
    /** @type {WfPageTurn[]} */
    var best = [];
    scripts.forEach(function (s) {
      var text = s.textContent || '';
      if (spec.marker && text.indexOf(spec.marker) < 0) return;
      var memo = decoded.get(s);
      if (memo && memo.spec === spec && memo.length === text.length) {
        if (memo.turns.length > best.length) best = memo.turns;
        return;
      }
      /** @type {unknown} */
      var data = null;
      // enqueue and assign readers name their marker (registry.schema.json's description)
      var marker = /** @type {string} */ (spec.marker);
      if (spec.format === 'enqueue') {
        var flat = enqueuedValue(text, marker);
        data = Array.isArray(flat) ? decodeTurboStream(flat) : null;
      } else if (spec.format === 'assign') {
        data = assignedValue(text, marker);
      } else {
        try { data = JSON.parse(text); } catch (e) { data = null; }
      }
      if (data === null) return;
      /** @type {WfPageTurn[]} */
      var turns = [];
      pathValues(data, spec.messages).forEach(function (m) {
        var rawRole = pathValues(m, spec.role)[0];
        var role = spec.roles ? spec.roles[/** @type {string} */ (rawRole)] : rawRole;
        if (role !== 'user' && role !== 'assistant') return;
        if (spec.skip && pathValues(m, spec.skip)[0]) return;   // hidden from the conversation
        // the message as the site stores it is the Markdown it renders; its text, whitespace collapsed
        var raw = pathValues(m, spec.text).map(textOf).join('\n\n').trim();
        var t = X.normalise(raw);
        if (!t) return;
        var id = spec.native_id ? pathValues(m, spec.native_id)[0] : null;
        var prev = turns[turns.length - 1];
        if (spec.join === 'consecutive' && prev && prev.role === role) {
          prev.text = X.normalise(prev.text + ' ' + t);   // one turn shown as several messages
          prev.markdown = (prev.markdown || '') + '\n\n' + raw;
          return;
        }
        turns.push({ role: role, text: t, markdown: raw, id: typeof id === 'string' && id ? id : null });
      });
      decoded.set(s, { spec: spec, length: text.length, turns: turns });
      if (turns.length > best.length) best = turns;
    });
    return best;
  }

  /**
   * The conversation the page's own data holds, with the reader that found it: the first
   * `page_data` reader of the site (newest first) that finds turns; else null.
   * @param {Document} doc @param {WfSite} site
   * @returns {{reader: WfPageDataSpec, turns: WfPageTurn[]} | null}
   */
  function read(doc, site) {
    var specs = site.page_data || [];
    var path = location.pathname + location.search;
    for (var i = 0; i < specs.length; i++) {
      if (specs[i].paths && !new RegExp(specs[i].paths).test(path)) continue;
      var turns = readWith(doc, specs[i]);
      if (turns.length) return { reader: specs[i], turns: turns };
    }
    return null;
  }

  ns.pageData = Object.freeze({
    read: read,
    readWith: readWith,
    decodeTurboStream: decodeTurboStream,
    pathValues: pathValues,
  });
})();
