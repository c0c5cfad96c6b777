/* Wherefrom content scripts: the shared namespace (classic script, loaded first after
 * shared/protocol.js and registry.generated.js; see files.json).
 *
 * MV3 content scripts are classic scripts sharing one isolated world, so the files share code
 * through one object on globalThis. Each file adds its part while the namespace is being built;
 * capture.js, the last file, freezes it and starts the runtime. If the files are injected a
 * second time into the same world, the namespace is already frozen and every file returns early.
 */
(function () {
  'use strict';
  var ns = globalThis.Wherefrom;
  if (ns && Object.isFrozen(ns)) return;
  ns = globalThis.Wherefrom = ns || /** @type {WfNamespace} */ ({});  // the files below fill it in
  ns.adapters = ns.adapters || {};

  /** Message types (WherefromProtocol when shared/protocol.js is loaded, else the same literals). */
  var P = /** @type {Partial<WfProtocolAPI>} */ (globalThis.WherefromProtocol || {});
  ns.messages = Object.freeze({
    CAPTURE_TURNS: P.CAPTURE_TURNS || 'content:capture-turns',
    SELECTOR_MISS: P.SELECTOR_MISS || 'content:selector-miss',
    INSERT_TEXT: P.INSERT_TEXT || 'background:insert-text',
  });
})();
