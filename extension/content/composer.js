/* Wherefrom content scripts: insert text into a chat site's composer (classic script).
 *
 * The registry names each site's composer selector and editor type; each editor type needs
 * its own method so that the editor's own state (not just its DOM) learns the text:
 *   prosemirror / tiptap / lexical / contenteditable
 *       focus, caret at the end, document.execCommand('insertText') — the browser fires the
 *       trusted beforeinput/input the editor listens to; fallback: a synthetic beforeinput
 *       InputEvent (inputType insertText), which these editors handle themselves.
 *   quill      execCommand into .ql-editor (Quill watches DOM mutations); fallback: append a <p>.
 *   textarea   the prototype's native value setter, then a bubbling `input` event (React's
 *              value tracker sees a real change).
 * Nothing is ever submitted: no Enter key, no click on the send button.
 */
(function () {
  'use strict';
  var ns = /** @type {WfNamespace} */ (globalThis.Wherefrom);  // checked on the next line
  if (!ns || Object.isFrozen(ns)) return;

  /** @param {WfSite} site @param {ParentNode} [root] @returns {Element | null} */
  function findComposer(site, root) {
    var c = site.composer;
    if (!c) return null;
    var list = ns.extractor.queryAll(root || document, ns.extractor.asSelector(c.selector), !!site.shadow);
    for (var i = 0; i < list.length; i++) {
      var el = list[i];
      if (el.getClientRects().length || i === list.length - 1) return el;
    }
    return null;
  }

  /** @param {Node} el */
  function caretToEnd(el) {
    var range = document.createRange();
    range.selectNodeContents(el);
    range.collapse(false);
    var sel = window.getSelection();
    if (sel) { sel.removeAllRanges(); sel.addRange(range); }
  }

  /** @param {HTMLElement} el */
  function plainText(el) {
    return (el.innerText || el.textContent || '').replace(/\s+/g, ' ').trim();
  }

  /** @param {HTMLElement} el @param {string} text */
  function insertRich(el, text) {
    el.focus();
    caretToEnd(el);
    var before = plainText(el);
    var ok = false;
    try { ok = document.execCommand('insertText', false, text); } catch (e) { ok = false; }
    var want = text.replace(/\s+/g, ' ').trim();
    if (ok && plainText(el).indexOf(want) >= 0 && plainText(el) !== before) return;
    var ev = new InputEvent('beforeinput', {
      inputType: 'insertText', data: text, bubbles: true, cancelable: true, composed: true,
    });
    el.dispatchEvent(ev);
  }

  /** @param {HTMLElement} el @param {string} text */
  function insertQuill(el, text) {
    var editor = el.classList.contains('ql-editor') ? el : /** @type {HTMLElement | null} */ (el.querySelector('.ql-editor')) || el;
    editor.focus();
    caretToEnd(editor);
    var ok = false;
    try { ok = document.execCommand('insertText', false, text); } catch (e) { ok = false; }
    if (ok && plainText(editor).indexOf(text.replace(/\s+/g, ' ').trim()) >= 0) return;
    text.split('\n').forEach(function (line) {
      var p = document.createElement('p');
      if (line) p.textContent = line; else p.appendChild(document.createElement('br'));
      editor.appendChild(p);
    });
  }

  /** @param {HTMLTextAreaElement | HTMLInputElement} el @param {string} text */
  function insertTextarea(el, text) {
    var proto = el instanceof HTMLInputElement ? HTMLInputElement.prototype : HTMLTextAreaElement.prototype;
    // the prototype's own value accessor: frameworks (React) watch the instance's
    var value = /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(proto, 'value'));
    var getter = /** @type {() => string} */ (value.get);
    var setter = /** @type {(v: string) => void} */ (value.set);
    el.focus();
    var current = getter.call(el);
    setter.call(el, current ? current + (/\s$/.test(current) ? '' : ' ') + text : text);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }

  /**
   * Insert text into the site's composer. Returns {ok, editor, error?}.
   * @param {WfSite} site @param {unknown} text (from a message: checked here) @returns {WfInsertResult}
   */
  function insert(site, text) {
    var editor = site.composer ? site.composer.editor : null;
    if (typeof text !== 'string' || !text) return { ok: false, editor: editor, error: 'no text' };
    var el = /** @type {HTMLElement | null} */ (findComposer(site));  // composers are HTML elements
    if (!el) return { ok: false, editor: editor, error: 'composer not found' };
    try {
      if (editor === 'textarea' || el instanceof HTMLTextAreaElement || el instanceof HTMLInputElement) {
        insertTextarea(/** @type {HTMLTextAreaElement} */ (el), text);  // the registry says it is one
      } else if (editor === 'quill') {
        insertQuill(el, text);
      } else {
        insertRich(el, text);
      }
    } catch (e) {
      return { ok: false, editor: editor, error: String(e instanceof Error ? e.message : e) };
    }
    return { ok: true, editor: editor };
  }

  ns.composer = Object.freeze({ find: findComposer, insert: insert });
})();
