// The browser link: Chrome's native messaging host `wherefrom native-host`, installed by
// `wherefrom install-browser-link` for this extension id only. Two questions, nothing else:
//   locate  where the server is and what its token is (when it runs)
//   start   start it when it does not run, then answer as locate
// Asked only after the disclosure was accepted, when the server cannot be reached or does not
// know us. The answer's url (a loopback origin) and token go to chrome.storage (store.js); the
// token is never shown. Without the host, pasting the token in Settings still pairs.
// Session keys: serverStarting {at} while a start runs (the panel shows "Starting…"),
// link {state: 'ok' | 'absent' | 'error', message} (what the last ask found, for Settings).

import { getLocal, setLocal, setSession, removeSession } from './store.js';

export const HOST_NAME = 'org.wherefrom.companion';

/**
 * @typedef {{ok: true, running: boolean, url: string, token?: string, started?: boolean}} HostAnswer
 * @typedef {{ok: false, state: 'absent' | 'error', message: string}} LinkFailure
 */

/** @param {'locate' | 'start'} type @returns {Promise<HostAnswer | LinkFailure>} */
async function ask(type) {
  let reply;
  try {
    reply = await chrome.runtime.sendNativeMessage(HOST_NAME, { type });
  } catch (err) {
    const text = String((err && /** @type {any} */ (err).message) || err);
    if (/not found/i.test(text)) return { ok: false, state: 'absent', message: 'The browser link is not installed.' };
    return { ok: false, state: 'error', message: `The browser link failed: ${text}` };
  }
  if (!reply || reply.ok !== true) {
    const message = reply && reply.error && typeof reply.error.message === 'string' ? reply.error.message : 'no answer';
    return { ok: false, state: 'error', message: `The browser link said: ${message}` };
  }
  return reply;
}

/** A loopback http origin, or null (the host's url is checked as the Settings' is). @param {unknown} url */
function loopbackOrigin(url) {
  try {
    const u = new URL(String(url));
    const loopback = u.hostname === '127.0.0.1' || u.hostname === 'localhost' || u.hostname === '[::1]';
    return u.protocol === 'http:' && loopback ? u.origin : null;
  } catch {
    return null;
  }
}

/** One link attempt at a time (a transient chain, not state: storage holds the outcome). */
/** @type {Promise<{ok: boolean, started?: boolean, message?: string}> | null} */
let inFlight = null;

/**
 * Ask the host for the server (starting it when `start`), and store its url and token.
 * Nothing happens before the disclosure was accepted.
 * @param {'locate' | 'start'} type
 * @returns {Promise<{ok: boolean, started?: boolean, message?: string}>}
 */
export function linkUp(type) {
  if (!inFlight) inFlight = linkOnce(type).finally(() => { inFlight = null; });
  return inFlight;
}

/** @param {'locate' | 'start'} type */
async function linkOnce(type) {
  const { disclosureAccepted } = await getLocal(['disclosureAccepted']);
  if (!disclosureAccepted) return { ok: false, message: 'Accept the disclosure first.' };
  if (type === 'start') await setSession('serverStarting', { at: Date.now() });
  try {
    const reply = await ask(type);
    if (!reply.ok) {
      await setSession('link', { state: reply.state, message: reply.message });
      return { ok: false, message: reply.message };
    }
    const origin = loopbackOrigin(reply.url);
    if (!reply.running || !reply.token || !origin) {
      await setSession('link', { state: 'ok', message: 'The browser link found no server running.' });
      return { ok: false, message: 'No server running.' };
    }
    await setLocal({ serverUrl: origin, token: reply.token });
    await setSession('link', { state: 'ok', message: reply.started ? 'Started by the browser link.' : 'Found by the browser link.' });
    return { ok: true, started: Boolean(reply.started) };
  } finally {
    if (type === 'start') await removeSession('serverStarting');
  }
}
