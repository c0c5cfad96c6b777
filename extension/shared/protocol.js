/* Wherefrom message protocol: one set of constants named by direction, one validator.
 *
 * A classic script (content scripts load it by file) that also works as a side-effect ES module
 * import (`import '../shared/protocol.js'`): it only assigns globalThis.WherefromProtocol.
 *
 * Every message is {type, payload}. Trust tiers:
 *   content  a content script on a web page (sender.tab set, sender.url is the page): may send
 *            content:* types only. It never names a URL, title or server path: the background takes
 *            url/title from sender.tab and builds every request itself.
 *   panel    an extension page of ours (the side panel, sender.url under sidepanel/): panel:* types.
 *   background → content: background:* types (the content script checks sender.id itself).
 */
(function () {
  'use strict';

  /** @typedef {'content' | 'panel' | 'background'} SenderKind */
  /** Field specs: type name, `?` suffix for optional; [min, max] lengths for strings/arrays. */
  /** @typedef {[string, number?, number?]} FieldSpec */
  /** @typedef {Record<string, FieldSpec>} Schema */

  var T = {
    // content → background
    CAPTURE_TURNS: 'content:capture-turns',
    SELECTOR_MISS: 'content:selector-miss',
    // background → content
    INSERT_TEXT: 'background:insert-text',
    // panel → background
    PANEL_GET_STATE: 'panel:get-state',
    PANEL_OPENED: 'panel:opened',
    PANEL_GET_PAGE: 'panel:get-page',
    PANEL_SAVE_NOTE: 'panel:save-note',
    PANEL_ADD_PAGE: 'panel:add-page',
    PANEL_FORGET_DRY_RUN: 'panel:forget-dry-run',
    PANEL_FORGET_APPLY: 'panel:forget-apply',
    PANEL_FORGET_UNDO: 'panel:forget-undo',
    PANEL_GET_POLICY: 'panel:get-policy',
    PANEL_SET_RULE: 'panel:set-rule',
    PANEL_DELETE_RULE: 'panel:delete-rule',
    PANEL_PAIR: 'panel:pair',
    PANEL_UNPAIR: 'panel:unpair',
    PANEL_ACCEPT_DISCLOSURE: 'panel:accept-disclosure',
    PANEL_SET_PAGE_MEMORY: 'panel:set-page-memory',
    PANEL_GET_ACTIVITY: 'panel:get-activity',
    PANEL_RETRY_OUTBOX: 'panel:retry-outbox',
    PANEL_INSERT_TEXT: 'panel:insert-text',
    PANEL_CLEAR_NOTICE: 'panel:clear-notice',
    PANEL_SEARCH: 'panel:search',
    PANEL_GET_CONVERSATION: 'panel:get-conversation',
    PANEL_CONVERSATION_MARKDOWN: 'panel:conversation-markdown',
    PANEL_LIST_LIBRARY: 'panel:list-library',
    PANEL_GET_DOCUMENT: 'panel:get-document',
    PANEL_DELETE_DOCUMENT: 'panel:delete-document',
    PANEL_UNDO_DELETE_DOCUMENT: 'panel:undo-delete-document',
  };

  var MODES = ['off', 'suggest', 'collect'];
  // Sanity bounds on a message's size only; what may be stored is the server's decision
  // (server/limits.py, served in the policy snapshot), and the worker cuts to that.
  var MAX_TEXT = 200000;
  var MAX_MARKDOWN = 400000;  // a turn's Markdown (code, tables) is longer than its text
  // Every field of a content-script message is bounded (a web page controls what its content
  // script sees): strings by length, lists by count, and a capture's text in total.
  var MAX_DETAIL = 500;
  var MAX_TURNS = 5000;
  var MAX_CONTENT_CHARS = 16 * 1024 * 1024;

  /** Payload schemas: field -> [type, min, max] (type ending in `?` = optional). */
  /** @type {FieldSpec} */
  var TAB = ['integer?', 0, 2147483647];
  /** @type {Record<string, Schema>} */
  var SCHEMAS = {};
  SCHEMAS[T.CAPTURE_TURNS] = {
    site: ['string', 1, 64],
    turns: ['turns', 0, MAX_TURNS],
    settled: ['boolean?'],
  };
  // a miss names its kind, the layouts tried and the URL's path pattern — never page text
  SCHEMAS[T.SELECTOR_MISS] = {
    site: ['string', 1, 64],
    kind: ['string?', 1, 32],
    layouts: ['strings?', 0, 20],
    path: ['string?', 0, 300],
    detail: ['string?', 0, MAX_DETAIL],
  };
  SCHEMAS[T.INSERT_TEXT] = { text: ['string', 1, MAX_TEXT] };
  SCHEMAS[T.PANEL_GET_STATE] = { tabId: TAB };
  SCHEMAS[T.PANEL_OPENED] = {};
  SCHEMAS[T.PANEL_GET_PAGE] = { tabId: TAB };
  SCHEMAS[T.PANEL_SAVE_NOTE] = { tabId: TAB, text: ['string', 1, MAX_TEXT] };
  SCHEMAS[T.PANEL_ADD_PAGE] = { tabId: TAB };
  SCHEMAS[T.PANEL_FORGET_DRY_RUN] = { host: ['string', 1, 300] };
  SCHEMAS[T.PANEL_FORGET_APPLY] = { host: ['string', 1, 300], confirm: ['string', 1, 200] };
  SCHEMAS[T.PANEL_FORGET_UNDO] = { batch: ['string', 1, 200] };
  SCHEMAS[T.PANEL_GET_POLICY] = { refresh: ['boolean?'] };
  SCHEMAS[T.PANEL_SET_RULE] = { host: ['string', 1, 300], mode: ['mode'] };
  SCHEMAS[T.PANEL_DELETE_RULE] = { host: ['string', 1, 300] };
  SCHEMAS[T.PANEL_PAIR] = { token: ['string', 1, 512] };
  SCHEMAS[T.PANEL_UNPAIR] = {};
  SCHEMAS[T.PANEL_ACCEPT_DISCLOSURE] = {};
  SCHEMAS[T.PANEL_SET_PAGE_MEMORY] = { on: ['boolean'] };
  SCHEMAS[T.PANEL_GET_ACTIVITY] = {};
  SCHEMAS[T.PANEL_RETRY_OUTBOX] = {};
  SCHEMAS[T.PANEL_INSERT_TEXT] = { tabId: TAB, text: ['string', 1, MAX_TEXT] };
  SCHEMAS[T.PANEL_CLEAR_NOTICE] = { tabId: TAB };
  // url: a conversation opened from search (a stored source_url); without it, the tab's own
  /** @type {FieldSpec} */
  var DOC_ID = ['integer', 1, 9007199254740991];
  SCHEMAS[T.PANEL_SEARCH] = { q: ['string', 1, 4000], limit: ['integer?', 1, 100] };
  SCHEMAS[T.PANEL_GET_CONVERSATION] = { tabId: TAB, url: ['string?', 1, 4096] };
  // the conversation on screen as the export's Markdown file (the server's one renderer)
  SCHEMAS[T.PANEL_CONVERSATION_MARKDOWN] = { url: ['string', 1, 4096] };
  SCHEMAS[T.PANEL_LIST_LIBRARY] = {};
  SCHEMAS[T.PANEL_GET_DOCUMENT] = { id: DOC_ID };
  SCHEMAS[T.PANEL_DELETE_DOCUMENT] = { id: DOC_ID };
  SCHEMAS[T.PANEL_UNDO_DELETE_DOCUMENT] = { id: DOC_ID };

  /** @param {string} type @returns {SenderKind | null} the only sender kind allowed to send it */
  function directionOf(type) {
    if (typeof type !== 'string') return null;
    if (type.indexOf('content:') === 0) return 'content';
    if (type.indexOf('panel:') === 0) return 'panel';
    if (type.indexOf('background:') === 0) return 'background';
    return null;
  }

  /** @param {unknown} v @returns {v is Record<string, any>} */
  function isPlainObject(v) {
    return v !== null && typeof v === 'object' && !Array.isArray(v) &&
      (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);
  }

  /**
   * @param {string} name @param {unknown} value @param {FieldSpec} spec
   * @returns {string | null} what is wrong with the field, or null
   */
  function checkField(name, value, spec) {
    var type = spec[0];
    var optional = type.charAt(type.length - 1) === '?';
    if (optional) type = type.slice(0, -1);
    if (value === undefined) return optional ? null : 'missing ' + name;
    var min = spec[1] === undefined ? 0 : spec[1];
    var max = spec[2] === undefined ? Infinity : spec[2];
    switch (type) {
      case 'string':
        if (typeof value !== 'string') return name + ' must be a string';
        if (value.length < min || value.length > max) return name + ' has a bad length';
        return null;
      case 'boolean':
        return typeof value === 'boolean' ? null : name + ' must be true or false';
      case 'integer':
        if (typeof value !== 'number' || Math.floor(value) !== value) return name + ' must be an integer';
        return value < min || value > max ? name + ' out of range' : null;
      case 'strings':
        if (!Array.isArray(value) || value.length < min || value.length > max) return name + ' must be a short list';
        for (var n = 0; n < value.length; n++) {
          if (typeof value[n] !== 'string' || value[n].length > 100) return name + '[' + n + '] must be a short string';
        }
        return null;
      case 'mode':
        return MODES.indexOf(/** @type {string} */ (value)) >= 0 ? null : name + ' must be off, suggest or collect';
      case 'turns':
        if (!Array.isArray(value)) return name + ' must be a list';
        if (value.length < min || value.length > max) return name + ' has too many items';
        for (var i = 0; i < value.length; i++) {
          var t = value[i];
          if (!isPlainObject(t)) return name + '[' + i + '] must be an object';
          for (var k in t) {
            if (k !== 'role' && k !== 'text' && k !== 'markdown' && k !== 'native_id') return name + '[' + i + '] unknown field ' + k;
          }
          if (t.role !== 'user' && t.role !== 'assistant') return name + '[' + i + '].role must be user or assistant';
          if (typeof t.text !== 'string' || t.text.length > MAX_TEXT) return name + '[' + i + '].text must be a string';
          if (t.markdown !== undefined && (typeof t.markdown !== 'string' || t.markdown.length > MAX_MARKDOWN)) {
            return name + '[' + i + '].markdown must be a string';
          }
          if (t.native_id !== undefined && (typeof t.native_id !== 'string' || t.native_id.length > 300)) {
            return name + '[' + i + '].native_id must be a short string';
          }
        }
        return null;
      default:
        return 'unknown field type';
    }
  }

  /**
   * Characters in all the strings of an (already validated, so shallow) payload.
   * @param {Record<string, unknown>} payload @returns {number}
   */
  function textChars(payload) {
    var n = 0;
    for (var k in payload) {
      var v = payload[k];
      if (typeof v === 'string') n += v.length;
      else if (Array.isArray(v)) {
        for (var i = 0; i < v.length; i++) {
          var t = v[i];
          n += (typeof t.text === 'string' ? t.text.length : 0) + (typeof t.native_id === 'string' ? t.native_id.length : 0) +
            (typeof t.markdown === 'string' ? t.markdown.length : 0);
        }
      }
    }
    return n;
  }

  /**
   * Check a message against the protocol for the kind of sender it came from.
   * @param {unknown} message
   * @param {SenderKind | string | null} senderKind
   * @returns {{ok: true, type: string, payload: Record<string, unknown>} | {ok: false, error: string}}
   */
  function validate(message, senderKind) {
    if (!isPlainObject(message)) return { ok: false, error: 'message must be an object' };
    var type = message.type;
    var schema = typeof type === 'string' && Object.prototype.hasOwnProperty.call(SCHEMAS, type) ? SCHEMAS[type] : null;
    if (!schema) return { ok: false, error: 'unknown message type' };
    for (var key in message) {
      if (key !== 'type' && key !== 'payload') return { ok: false, error: 'unknown message field ' + key };
    }
    if (directionOf(type) !== senderKind) return { ok: false, error: type + ' is not accepted from a ' + senderKind + ' sender' };
    var payload = message.payload === undefined ? {} : message.payload;
    if (!isPlainObject(payload)) return { ok: false, error: 'payload must be an object' };
    for (var field in payload) {
      if (!Object.prototype.hasOwnProperty.call(schema, field)) return { ok: false, error: 'unknown field ' + field };
    }
    for (var f in schema) {
      var err = checkField(f, payload[f], schema[f]);
      if (err) return { ok: false, error: err };
    }
    if (senderKind === 'content' && textChars(payload) > MAX_CONTENT_CHARS) {
      return { ok: false, error: 'message too large' };
    }
    return { ok: true, type: type, payload: payload };
  }

  /** @type {Record<string, unknown>} */
  var api = {
    validate: validate, directionOf: directionOf, MODES: MODES.slice(),
    LIMITS: Object.freeze({ text: MAX_TEXT, markdown: MAX_MARKDOWN, detail: MAX_DETAIL, turns: MAX_TURNS, contentChars: MAX_CONTENT_CHARS }),
  };
  for (var name in T) api[name] = T[/** @type {keyof typeof T} */ (name)];
  api.TYPES = Object.freeze(Object.assign({}, T));
  // the validator above is what makes a message a WfMessage (types.d.ts); tsc takes its word
  globalThis.WherefromProtocol = /** @type {WfProtocolAPI} */ (/** @type {unknown} */ (Object.freeze(api)));
})();
