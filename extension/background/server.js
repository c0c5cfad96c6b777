// The ONLY module that talks to the companion server. Every request is built here from a fixed
// route table and the configured loopback base URL; nothing a content script sends can choose a
// URL or a path. Errors are classified:
//   down      the fetch threw (server not running, port closed, timeout)
//   unpaired  401 (no token, or not the server's token)
//   refused   403 site_mode (the site is not `collect` on the server)
//   bad       anything else (4xx/5xx with the server's {error: {code, message}})

import { getLocal, DEFAULT_SERVER_URL } from './store.js';

/**
 * @typedef {{ok: true, status: number, data: any}} Ok
 * @typedef {{ok: false, kind: 'down' | 'unpaired' | 'refused' | 'bad', status: number, code: string,
 *   message: string, mode?: string}} Failure
 * @typedef {Ok | Failure} Result
 */

const TIMEOUT_MS = 15000;

/** Writes that may wait in the outbox, by name (the outbox stores the name, never a path). */
export const WRITE_ROUTES = Object.freeze({
  notes: '/api/notes',
  clips: '/api/clips',
  captures: '/api/captures',
  add_text: '/api/library/add_text',
});

/** The base URL: storage `serverUrl` when it is an http loopback origin, else the default. */
export async function baseUrl() {
  const { serverUrl } = await getLocal(['serverUrl']);
  try {
    const u = new URL(serverUrl);
    const loopback = u.hostname === '127.0.0.1' || u.hostname === 'localhost' || u.hostname === '[::1]';
    if (u.protocol === 'http:' && loopback) return u.origin;
  } catch {
    // fall through
  }
  return DEFAULT_SERVER_URL;
}

/**
 * @param {'GET' | 'POST' | 'PUT' | 'DELETE'} method
 * @param {string} path one of the fixed paths in this module
 * @param {{query?: Record<string, string | number>, body?: unknown, auth?: boolean,
 *   idempotencyKey?: string, token?: string}} [opts]
 * @returns {Promise<Result>}
 */
async function request(method, path, opts = {}) {
  const base = await baseUrl();
  const url = new URL(path, base);
  for (const [k, v] of Object.entries(opts.query || {})) url.searchParams.set(k, String(v));
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json' };
  if (opts.auth !== false) {
    const token = opts.token ?? (await getLocal(['token'])).token;
    if (!token) return { ok: false, kind: 'unpaired', status: 401, code: 'unpaired', message: 'Not paired' };
    headers.Authorization = `Bearer ${token}`;
  }
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  if (opts.idempotencyKey) headers['Idempotency-Key'] = opts.idempotencyKey;
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), TIMEOUT_MS);
  let resp;
  try {
    resp = await fetch(url.href, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      signal: ctrl.signal,
      credentials: 'omit',
      cache: 'no-store',
      redirect: 'error',
    });
  } catch (err) {
    return { ok: false, kind: 'down', status: 0, code: 'down', message: 'Server not running' };
  } finally {
    clearTimeout(timer);
  }
  /** @type {any} */
  let data = null;
  try {
    const text = await resp.text();
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (resp.ok) return { ok: true, status: resp.status, data };
  const error = (data && data.error) || {};
  const message = typeof error.message === 'string' ? error.message : `HTTP ${resp.status}`;
  const code = typeof error.code === 'string' ? error.code : 'http';
  if (resp.status === 401) return { ok: false, kind: 'unpaired', status: 401, code, message };
  if (resp.status === 403 && code === 'site_mode') {
    return { ok: false, kind: 'refused', status: 403, code, message, mode: error.mode };
  }
  return { ok: false, kind: 'bad', status: resp.status, code, message };
}

export const api = {
  /** No token: tells "server not running" apart from "not paired". */
  health: () => request('GET', '/api/health', { auth: false }),
  /** @param {string} [token] check a token before storing it */
  policy: (token) => request('GET', '/api/policy', token ? { token } : {}),
  /** @param {string} host */
  /** @param {string} host @param {string} mode */
  putRule: (host, mode) => request('PUT', '/api/site-mode', { body: { host, mode } }),
  /** @param {string} host */
  deleteRule: (host) => request('DELETE', '/api/site-mode', { query: { host } }),
  /** @param {string} url @param {string} title */
  pageMatch: (url, title) => request('GET', '/api/page-match', { query: title ? { url, title } : { url } }),
  /** @param {string} url */
  probe: (url) => request('GET', '/api/page-probe', { query: { url } }),
  /** @param {string} host */
  forgetDryRun: (host) => request('POST', '/api/forget', { body: { host, dry_run: true } }),
  /** @param {string} host @param {string} confirm */
  forgetApply: (host, confirm) => request('POST', '/api/forget', { body: { host, confirm } }),
  /** @param {string} batch */
  forgetUndo: (batch) => request('POST', '/api/forget/undo', { body: { batch } }),
  /** @param {string} q @param {number} limit */
  search: (q, limit) => request('GET', '/api/search', { query: { q, limit } }),
  /** @param {string} url a stored conversation's page (every version of each turn comes too) */
  conversation: (url) => request('GET', '/api/conversations', { query: { url, versions: 'true' } }),
  /** @param {string} url a stored conversation's page: the export's Markdown file of it */
  conversationMarkdown: (url) => request('GET', '/api/conversations/markdown', { query: { url } }),
  /** @param {number} limit */
  library: (limit) => request('GET', '/api/library', { query: { limit } }),
  /** @param {number} id */
  document: (id) => request('GET', `/api/library/${Math.trunc(id)}`),
  /** @param {number} id */
  deleteDocument: (id) => request('DELETE', `/api/library/${Math.trunc(id)}`),
  /** @param {number} limit */
  activity: (limit) => request('GET', '/api/activity', { query: { limit } }),
  /**
   * A write that carries a page, by route name, with its idempotency key.
   * @param {keyof typeof WRITE_ROUTES} route
   * @param {Record<string, unknown>} body
   * @param {string} key
   */
  write: (route, body, key) => {
    const path = WRITE_ROUTES[route];
    if (!path) return Promise.resolve(/** @type {Failure} */ ({ ok: false, kind: 'bad', status: 0, code: 'route', message: 'unknown route' }));
    return request('POST', path, { body, idempotencyKey: key });
  },
};

/** Words for a failure, for the panel and the badge title. @param {Failure} f */
export function explain(f) {
  switch (f.kind) {
    case 'down':
      return 'Server not running — start it with “wherefrom serve”.';
    case 'unpaired':
      return 'Not paired — paste the token “wherefrom pair” prints into Settings.';
    case 'refused':
      return `Not saved: ${f.message}`;
    default:
      return `The server refused it: ${f.message}`;
  }
}
