// The service worker. Written for eviction: every listener is registered synchronously at top
// level, each awaits the one `ready` promise, and all state is in chrome.storage (store.js).

import '../shared/protocol.js';
import * as actions from './actions.js';
import { refreshPolicy, syncContentScripts } from './governance.js';
import { ALARM, flush, pending } from './outbox.js';
import { connection, dispatch } from './messages.js';
import { flushDeletes } from './library.js';
import { pageMemoryOn, removeSession, setSession } from './store.js';
import { refreshTab, refreshActiveTabs, invalidatePage, ensureCapture, ensureCaptureEverywhere } from './tabs.js';

const MENU_SAVE_SELECTION = 'wherefrom-save-selection';

const ready = (async () => {
  try {
    await chrome.sidePanel.setPanelBehavior({ openPanelOnActionClick: true });
  } catch {
    // older Chrome: the panel still opens from the command and the menu
  }
})();

/** Outbox delivery, only while page memory is on (with it off, tab activity sends nothing). */
async function tryOutbox() {
  if (await pageMemoryOn()) await flush(actions.gate, invalidatePage);
}

/** @param {string} label @param {() => Promise<unknown>} fn */
function guarded(label, fn) {
  return ready.then(fn).catch((err) => console.error(`wherefrom: ${label}`, err));
}

chrome.runtime.onInstalled.addListener(() =>
  guarded('onInstalled', async () => {
    await chrome.contextMenus.removeAll();
    chrome.contextMenus.create({ id: MENU_SAVE_SELECTION, title: 'Save selection to memory', contexts: ['selection'] });
    await syncContentScripts();
    await refreshActiveTabs();
  }),
);

chrome.runtime.onStartup.addListener(() =>
  guarded('onStartup', async () => {
    if (await pageMemoryOn()) await connection(); // finds the server, or has the browser link start it
    const { changed } = await refreshPolicy();
    await syncContentScripts();
    if (changed) await refreshActiveTabs();
    await tryOutbox();
    await refreshActiveTabs();
    await flushDeletes(); // library deletes whose undo window ran out while the browser was closed
  }),
);

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  ready
    .then(() => dispatch(message, sender))
    .then(sendResponse, (err) => {
      console.error('wherefrom: message', err);
      sendResponse({ ok: false, error: 'internal error' });
    });
  return true; // answered asynchronously
});

chrome.tabs.onActivated.addListener(({ tabId }) =>
  guarded('onActivated', async () => {
    await refreshTab(tabId);
    await tryOutbox();
  }),
);

chrome.tabs.onUpdated.addListener((tabId, change, tab) => {
  if (!change.url && change.status !== 'complete') return;
  guarded('onUpdated', async () => {
    if (change.url) await actions.clearNotice(tabId);
    if (tab.active) await refreshTab(tabId, tab);
    if (change.status === 'complete') await ensureCapture(tab);
  });
});

chrome.tabs.onRemoved.addListener((tabId) =>
  guarded('onRemoved', () => removeSession(`notice:${tabId}`)),
);

chrome.contextMenus.onClicked.addListener((info, tab) =>
  guarded('contextMenu', async () => {
    if (info.menuItemId !== MENU_SAVE_SELECTION || !tab) return;
    const text = (info.selectionText || '').trim();
    const result = text ? await actions.saveClip(tab, text) : { ok: false, message: 'Nothing is selected.' };
    await actions.notify(tab.id, result);
  }),
);

chrome.commands.onCommand.addListener((command, tab) => {
  if (command === 'open-side-panel' || command === 'open-search') {
    // must run synchronously inside the user gesture, before any await
    if (tab && tab.windowId !== undefined) chrome.sidePanel.open({ windowId: tab.windowId }).catch(() => undefined);
    // the panel (opening now, or already open) shows the view asked for (sidepanel/panel.js)
    if (command === 'open-search') setSession('panelView', { view: 'search', at: Date.now() }).catch(() => undefined);
    return;
  }
  if (command === 'save-page') {
    guarded('save-page', async () => {
      const target = tab || (await chrome.tabs.query({ active: true, lastFocusedWindow: true }))[0];
      if (!target) return;
      await actions.notify(target.id, await actions.addPage(target));
    });
  }
});

chrome.storage.onChanged.addListener((changes, area) => {
  if (area !== 'local') return;
  if (changes.pageMemory || changes.disclosureAccepted || changes.policy) {
    guarded('storage', async () => {
      await syncContentScripts();
      await ensureCaptureEverywhere();
      await refreshActiveTabs();
    });
  }
});

chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name !== ALARM) return;
  return guarded('alarm', async () => {
    await tryOutbox();
    // saves still waiting while page memory is on: the server may be down, and the browser link
    // can start it (connection() asks it only then); deliver once it answers
    if ((await pending()).length && (await pageMemoryOn()) && (await connection()).state === 'connected') await tryOutbox();
  });
});
