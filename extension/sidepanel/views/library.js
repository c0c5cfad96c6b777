// Library view: the saved documents (title, site, saved age, size), newest first. Each can open
// its source page, be read (its Markdown or text, GET /api/library/{id}) or be deleted with an
// undo: the worker holds the delete for a few seconds (background/library.js) and the row says
// so, with an Undo button, until then.

import { $, el, webUrl } from '../dom.js';
import { renderMarkdown } from '../markdown.js';
import { P, send } from '../state.js';
import { withoutTitle } from '../../shared/text.js';

/** @type {{reading: number | null, deleted: Map<number, {title: string, until: number, timer: number}>}} */
const state = { reading: null, deleted: new Map() };

/** @param {number} chars */
export function sizeWords(chars) {
  if (chars < 1000) return `${chars} characters`;
  const k = chars / 1000;
  return `${k < 10 ? k.toFixed(1).replace(/\.0$/, '') : Math.round(k)}k characters`;
}

export async function renderLibrary() {
  if (state.reading !== null) return renderReader(state.reading);
  $('doc-reader').hidden = true;
  $('library').hidden = false;
  const list = $('library-list');
  const status = $('library-status');
  const r = await send(P.PANEL_LIST_LIBRARY);
  list.replaceChildren();
  for (const [id, d] of state.deleted) list.append(deletedRow(id, d));
  if (!r.ok) {
    status.textContent = r.message;
    status.dataset.tone = 'bad';
    return;
  }
  status.dataset.tone = '';
  const n = r.documents.length;
  status.textContent = n ? `${n} saved page${n === 1 ? '' : 's'}.` : '';
  if (!n && !state.deleted.size) {
    list.append(el('li', { class: 'card empty', text: 'Nothing saved yet. “Add this page to library” in Memory (or Alt+Shift+S) keeps a readable copy of a page.' }));
  }
  for (const d of r.documents) list.append(documentRow(d));
}

/** @param {any} d */
function documentRow(d) {
  const titleId = `doc-${d.id}`;
  const read = el('button', { class: 'small', text: 'Read', attrs: { type: 'button', 'aria-describedby': titleId } });
  read.addEventListener('click', () => {
    state.reading = d.id;
    renderLibrary();
  });
  const del = el('button', { class: 'small danger', text: 'Delete', attrs: { type: 'button', 'aria-describedby': titleId } });
  del.addEventListener('click', () => deleteDocument(d));
  return el('li', { class: 'card doc', attrs: { 'data-id': String(d.id) } }, [
    el('div', { class: 'doc-title', text: d.title || d.source_ref || d.source_url, attrs: { id: titleId } }),
    el('div', { class: 'meta' }, [
      el('span', { class: 'kind', text: d.sitename || d.source_host }),
      d.sitename && d.sitename !== d.source_host ? el('span', { text: d.source_host }) : null,
      el('span', { class: 'age', text: `saved ${d.age.label}` }),
      el('span', { text: sizeWords(d.chars) }),
    ]),
    d.text ? el('p', { class: 'excerpt', text: d.text }) : null,
    el('div', { class: 'row' }, [
      webUrl(d.source_url) ? el('a', { class: 'button small', text: 'Open page', attrs: { href: d.source_url, target: '_blank', rel: 'noreferrer', 'aria-describedby': titleId } }) : null,
      read,
      del,
    ]),
  ]);
}

/** @param {number} id @param {{title: string, until: number}} d */
function deletedRow(id, d) {
  const undo = el('button', { class: 'small', text: 'Undo', attrs: { type: 'button' } });
  undo.addEventListener('click', async () => {
    const entry = state.deleted.get(id);
    if (entry) clearTimeout(entry.timer);
    state.deleted.delete(id);
    const r = await send(P.PANEL_UNDO_DELETE_DOCUMENT, { id });
    const status = $('library-status');
    status.textContent = r.ok ? `Kept “${d.title}”.` : `Too late: “${d.title}” was already deleted.`;
    status.dataset.tone = r.ok ? 'ok' : 'bad';
    await renderLibrary();
  });
  return el('li', { class: 'card doc deleted', attrs: { 'data-deleted': String(id) } }, [
    el('span', { text: `Deleted “${d.title}”.` }),
    undo,
  ]);
}

/** @param {any} d */
async function deleteDocument(d) {
  const r = await send(P.PANEL_DELETE_DOCUMENT, { id: d.id });
  if (!r.ok) {
    $('library-status').textContent = r.message || 'Not deleted.';
    return;
  }
  const title = d.title || d.source_url;
  // the row goes when the worker has sent the delete (its window plus a moment)
  const timer = /** @type {any} */ (setTimeout(() => {
    state.deleted.delete(d.id);
    renderLibrary();
  }, r.undoMs + 500));
  state.deleted.set(d.id, { title, until: Date.now() + r.undoMs, timer });
  await renderLibrary();
  const undo = /** @type {HTMLElement | null} */ (document.querySelector(`[data-deleted="${d.id}"] button`));
  if (undo) undo.focus();
}

/** @param {number} id */
async function renderReader(id) {
  const box = $('doc-reader');
  $('library').hidden = true;
  box.hidden = false;
  const back = el('button', { class: 'small', text: '← Library', attrs: { type: 'button' } });
  back.addEventListener('click', () => {
    state.reading = null;
    renderLibrary();
  });
  box.replaceChildren(back, el('p', { class: 'muted', text: 'Loading…' }));
  const r = await send(P.PANEL_GET_DOCUMENT, { id });
  if (!r.ok) {
    box.replaceChildren(back, el('p', { class: 'muted bad', text: r.message }));
    return;
  }
  const d = r.document;
  box.replaceChildren(
    back,
    el('article', { class: 'card reader', attrs: { 'aria-labelledby': 'reader-title' } }, [
      el('h2', { class: 'reader-title', text: d.title || d.source_url, attrs: { id: 'reader-title' } }),
      el('div', { class: 'meta' }, [
        el('span', { class: 'kind', text: d.sitename || d.source_host }),
        d.author ? el('span', { text: d.author }) : null,
        d.published ? el('span', { text: d.published }) : null,
        el('span', { class: 'age', text: `saved ${d.age.label}` }),
        el('span', { text: sizeWords(d.chars) }),
      ]),
      webUrl(d.source_url) ? el('a', { class: 'source', text: d.source_url, attrs: { href: d.source_url, target: '_blank', rel: 'noreferrer' } }) : null,
      // the page's structure (the extraction's Markdown) through the same renderer and sanitiser
      // as chat turns; a page saved as text, or before pages kept their structure, shows its text
      typeof d.markdown === 'string' && d.markdown.trim()
        ? el('div', { class: 'reader-text md' }, [renderMarkdown(withoutTitle(d.markdown, d.title))])
        : el('div', { class: 'reader-text plain', text: d.text }),
    ]),
  );
  back.focus();
}
