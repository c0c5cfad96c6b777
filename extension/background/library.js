// Deleting a library document with an undo: the delete is held here for UNDO_MS, then sent.
//
// Decision: the server's DELETE /api/library/{id} removes a document for good (its chunks and
// their index entries with it), so the undo window lives in the extension, not on the server.
// The panel asks for a delete; the worker records {id: due} in store.js `libraryPendingDeletes` (it survives
// the panel closing and the worker being evicted) and sends the DELETE when it falls due — on
// its timer, and before every library listing and at start-up for anything overdue. Undo within
// the window drops the pending entry and nothing reaches the server. While a delete is pending,
// the document is left out of the panel's library list.

import { api, explain } from './server.js';
import { getLocal, setLocal } from './store.js';

export const UNDO_MS = 8000;

/** @returns {Promise<Record<string, number>>} document id -> when its delete falls due (ms) */
async function pending() {
  return (await getLocal(['libraryPendingDeletes'])).libraryPendingDeletes;
}

/** @param {Record<string, number>} value */
async function save(value) {
  await setLocal({ libraryPendingDeletes: value });
}

/** @param {number} id */
export async function scheduleDelete(id, now = Date.now()) {
  const p = await pending();
  p[String(id)] = now + UNDO_MS;
  await save(p);
  setTimeout(() => flushDeletes().catch((err) => console.error('wherefrom: library delete', err)), UNDO_MS + 50);
  return { ok: true, undoMs: UNDO_MS };
}

/** @param {number} id @returns {Promise<boolean>} whether the delete was still pending */
export async function undoDelete(id) {
  const p = await pending();
  if (!(String(id) in p)) return false;
  delete p[String(id)];
  await save(p);
  return true;
}

/** Send every delete that has fallen due. A delete the server could not take stays pending
 * (server down) unless the document is gone already (404). */
export async function flushDeletes(now = Date.now()) {
  const p = await pending();
  const due = Object.entries(p).filter(([, at]) => at <= now).map(([id]) => Number(id));
  /** @type {string[]} */
  const failures = [];
  for (const id of due) {
    const res = await api.deleteDocument(id);
    if (res.ok || res.status === 404) {
      const again = await pending();
      delete again[String(id)];
      await save(again);
    } else {
      failures.push(explain(res));
    }
  }
  return { sent: due.length - failures.length, failures };
}

/** Ids whose delete is pending (left out of the list). */
export async function pendingIds() {
  return new Set(Object.keys(await pending()).map(Number));
}
