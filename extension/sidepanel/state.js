// The panel's state: which tab it is about, which view shows, and the one way to talk to the
// background (the token is never held here beyond the pairing input).

import { $ } from './dom.js';

export const P = globalThis.WherefromProtocol;

export const params = new URLSearchParams(location.search);

export const ui = {
  view: params.get('view') || 'memory',
  disclosureDismissed: false,
  /** @type {any} */ state: null,
  forget: /** @type {{host: string, confirm: string, until: number, timer: number} | null} */ (null),
  /** @type {string | null} */ undoBatch: null,
  /** the conversation view's subject: a page opened from Search, or null for the tab's own */
  conversation: /** @type {{url: string, from: string} | null} */ (null),
};

/** Set by panel.js: re-read the state and redraw the current view. */
export const hooks = {
  /** @type {() => Promise<void>} */ refreshAll: async () => {},
  /** @type {(name: string) => void} */ showView: () => {},
};

/** The tab this panel is about: ?tabId=N (tests, or a panel opened as a tab), else the active tab. */
export async function tabId() {
  const given = Number(params.get('tabId'));
  if (Number.isInteger(given) && given > 0) return given;
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  return tab ? tab.id : undefined;
}

/** @param {{state: string, message: string}} conn */
export function showConnection(conn) {
  const pill = $('conn');
  pill.dataset.state = conn.state;
  const words = /** @type {Record<string, string>} */ ({ connected: 'Connected', down: 'Server not running', unpaired: 'Not paired', starting: 'Starting…' });
  pill.textContent = words[conn.state] || conn.message;
  const detail = {
    connected: 'Connected to the Wherefrom server.',
    starting: 'Starting the Wherefrom server (the browser link)…',
    down: 'Server not running — start it with “wherefrom serve”. Nothing is lost: saves wait in the outbox.',
    unpaired: 'Not paired — the server is running but does not know this browser yet. Paste the token below.',
  }[conn.state] || conn.message;
  $('conn-detail').textContent = detail;
}

/**
 * Ask the background; message names and payload fields are the protocol's (types.d.ts
 * WfPayloads): a payload with required fields must be given.
 * @type {<T extends WfPanelType>(type: T, ...payload: {} extends WfPayloads[T] ? [WfPayloads[T]?] : [WfPayloads[T]]) => Promise<any>}
 */
export const send = async (type, ...rest) => {
  const payload = rest[0] || {};
  try {
    const r = await chrome.runtime.sendMessage({ type, payload });
    // keep the connection pill honest between checks
    const kind = r && (r.kind || (r.failure && r.failure.kind));
    if (kind === 'down') showConnection({ state: 'down', message: 'Server not running' });
    else if (kind === 'unpaired') showConnection({ state: 'unpaired', message: 'Not paired' });
    return r;
  } catch (err) {
    return { ok: false, message: 'The extension is restarting; try again.' };
  }
};

export async function loadState() {
  ui.state = await send(P.PANEL_GET_STATE, { tabId: await tabId() });
  return ui.state;
}

/** Age of a local timestamp (outbox entries, misses). @param {number} ms */
export function since(ms) {
  const s = Math.max(0, (Date.now() - ms) / 1000);
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}
