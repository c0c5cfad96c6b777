// A small in-memory stand-in for the chrome.* APIs the background uses (node tests only).
// It records listener registrations, storage, script registrations, icons and every fetch.

export function makeChrome() {
  const listeners = /** @type {Record<string, Function[]>} */ ({});
  const event = (/** @type {string} */ name) => ({
    addListener: (/** @type {Function} */ fn) => (listeners[name] ||= []).push(fn),
  });
  const area = () => {
    /** @type {Record<string, any>} */
    const data = {};
    return {
      data,
      async get(/** @type {any} */ keys) {
        const list = keys == null ? Object.keys(data) : Array.isArray(keys) ? keys : [keys];
        return Object.fromEntries(list.filter((k) => k in data).map((k) => [k, structuredClone(data[k])]));
      },
      async set(/** @type {Record<string, any>} */ values) {
        Object.assign(data, structuredClone(values));
      },
      async remove(/** @type {string | string[]} */ keys) {
        for (const k of Array.isArray(keys) ? keys : [keys]) delete data[k];
      },
      async clear() {
        for (const k of Object.keys(data)) delete data[k];
      },
    };
  };
  /** @type {any[]} */
  const registered = [];
  /** @type {any[]} */
  const icons = [];
  /** @type {Record<number, any>} */
  const tabs = {};
  const chrome = {
    listeners,
    icons,
    registered,
    tabsById: tabs,
    runtime: {
      id: 'gidncpejkfcnakpojbbbhocinihfkjmj',
      getURL: (/** @type {string} */ p) => `chrome-extension://gidncpejkfcnakpojbbbhocinihfkjmj/${p}`,
      onInstalled: event('runtime.onInstalled'),
      onStartup: event('runtime.onStartup'),
      onMessage: event('runtime.onMessage'),
    },
    storage: { local: area(), session: area(), onChanged: event('storage.onChanged') },
    tabs: {
      onActivated: event('tabs.onActivated'),
      onUpdated: event('tabs.onUpdated'),
      onRemoved: event('tabs.onRemoved'),
      async get(/** @type {number} */ id) {
        if (!tabs[id]) throw new Error('no tab');
        return tabs[id];
      },
      async query() {
        return Object.values(tabs);
      },
      /** messages the worker sent into tabs (content scripts answer {ok: true}) */
      sent: /** @type {{tabId: number, message: any}[]} */ ([]),
      async sendMessage(/** @type {number} */ tabId, /** @type {any} */ message) {
        this.sent.push({ tabId, message });
        return { ok: true, editor: 'fake' };
      },
    },
    contextMenus: { onClicked: event('contextMenus.onClicked'), removeAll: async () => {}, create: () => {} },
    commands: { onCommand: event('commands.onCommand') },
    alarms: {
      onAlarm: event('alarms.onAlarm'),
      get: async () => undefined,
      create: async () => {},
      clear: async () => true,
    },
    sidePanel: { setPanelBehavior: async () => {}, open: async () => {} },
    action: {
      setIcon: async (/** @type {any} */ d) => icons.push(d),
      setTitle: async () => {},
      setBadgeText: async () => {},
      setBadgeBackgroundColor: async () => {},
    },
    scripting: {
      getRegisteredContentScripts: async () => structuredClone(registered),
      registerContentScripts: async (/** @type {any[]} */ list) => registered.push(...structuredClone(list)),
      unregisterContentScripts: async (/** @type {{ids: string[]}} */ { ids }) => {
        for (const id of ids) registered.splice(registered.findIndex((s) => s.id === id), 1);
      },
      executeScript: async () => [{ result: '<html><body>page</body></html>' }],
    },
  };
  return chrome;
}

/**
 * A fetch stand-in: extension files from disk, server calls answered by `server(method, url, init)`.
 * @param {(method: string, url: URL, init: any) => any} server returns {status, body} or throws
 */
export function makeFetch(server, extRoot = new URL('../../extension/', import.meta.url)) {
  /** @type {{method: string, url: string, headers: any, body: any}[]} */
  const calls = [];
  const fetch = async (/** @type {string} */ href, /** @type {any} */ init = {}) => {
    const url = new URL(href);
    if (url.protocol === 'chrome-extension:') {
      const { readFile } = await import('node:fs/promises');
      try {
        const text = await readFile(new URL(url.pathname.slice(1), extRoot), 'utf8');
        return new Response(text, { status: 200 });
      } catch {
        return new Response('', { status: 404 });
      }
    }
    const method = init.method || 'GET';
    calls.push({ method, url: href, headers: init.headers || {}, body: init.body ? JSON.parse(init.body) : undefined });
    const answer = await server(method, url, init);
    return new Response(answer.body === undefined ? '' : JSON.stringify(answer.body), { status: answer.status || 200 });
  };
  return { fetch, calls };
}
