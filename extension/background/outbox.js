// Writes that failed because the server was down wait here (store.js `outbox`) and are
// delivered once when it is reachable: each item keeps the Idempotency-Key it was first sent with,
// so a delivery that reached the server but lost its answer is not stored twice.
// Delivery attempts: on startup, on tab activation, on panel open, and from an alarm at most every
// minute while the outbox is non-empty (the alarm is removed when it is empty); when the alarm
// finds the server down, the browser link is asked to start it (background/main.js).

import { api, WRITE_ROUTES } from './server.js';
import { getLocal, setLocal } from './store.js';

export const ALARM = 'wherefrom-outbox';
const MAX_ITEMS = 200;

/** In-worker serialisation of read-modify-write on the outbox (the state itself is in storage). */
let chain = Promise.resolve();
/** @template T @param {() => Promise<T>} fn @returns {Promise<T>} */
function serial(fn) {
  const run = chain.then(fn, fn);
  chain = run.then(() => undefined, () => undefined);
  return run;
}

/**
 * Queue a write. A settled capture replaces an earlier queued capture of the same page.
 * @param {keyof typeof WRITE_ROUTES} route
 * @param {Record<string, unknown>} body
 * @param {string} key the Idempotency-Key of the first attempt
 * @param {string} summary
 */
export function enqueue(route, body, key, summary) {
  return serial(async () => {
    let { outbox } = await getLocal(['outbox']);
    if (route === 'captures') outbox = outbox.filter((i) => !(i.route === 'captures' && i.url === body.url));
    outbox.push({ key, route, body, url: String(body.url || ''), summary, created: Date.now(), attempts: 1 });
    if (outbox.length > MAX_ITEMS) outbox = outbox.slice(-MAX_ITEMS);
    await setLocal({ outbox });
    await scheduleAlarm(outbox.length);
  });
}

/** @param {number} count */
async function scheduleAlarm(count) {
  if (count > 0) {
    const existing = await chrome.alarms.get(ALARM);
    if (!existing) await chrome.alarms.create(ALARM, { periodInMinutes: 1, delayInMinutes: 1 });
  } else {
    await chrome.alarms.clear(ALARM);
  }
}

/**
 * Try to deliver every queued write, oldest first. Stops at the first `down` (nothing else will
 * get through either). Each item's page is checked again first with `allowed` (the same gate as a
 * fresh write): a site turned `off`, page memory switched off, or a sensitive default since the
 * write was queued means the item is never sent — it leaves the outbox unsent. A write the server
 * refuses for good (refused / bad) leaves the outbox too; both are remembered in `outboxDropped`
 * for the Activity view; `unpaired` keeps it waiting.
 * @param {(url: string) => Promise<{ok: boolean, kind?: string, message?: string}>} allowed
 * @param {(url: string) => Promise<void>} [onDelivered] called with the page URL of each delivery
 * @returns {Promise<{delivered: number, pending: number}>}
 */
export function flush(allowed, onDelivered) {
  return serial(async () => {
    const { outbox } = await getLocal(['outbox']);
    let delivered = 0;
    const remaining = [];
    /** @type {any[]} */
    const dropped = [];
    let stop = false;
    for (const item of outbox) {
      if (stop) {
        remaining.push(item);
        continue;
      }
      const g = await allowed(item.url);
      if (!g.ok) {
        if (g.kind === 'unpaired') {
          remaining.push(item);
          stop = true;
        } else {
          dropped.push({ at: Date.now(), summary: item.summary, url: item.url, reason: `not sent: ${g.message}` });
        }
        continue;
      }
      const res = await api.write(/** @type {keyof typeof WRITE_ROUTES} */ (item.route), item.body, item.key);
      if (res.ok) {
        delivered++;
        if (onDelivered && item.url) await onDelivered(item.url).catch(() => undefined);
      } else if (res.kind === 'down' || res.kind === 'unpaired') {
        remaining.push({ ...item, attempts: item.attempts + 1, lastError: res.kind });
        stop = true;
      } else {
        dropped.push({ at: Date.now(), summary: item.summary, url: item.url, reason: res.message });
      }
    }
    await setLocal({ outbox: remaining });
    if (dropped.length) {
      const { outboxDropped } = await getLocal(['outboxDropped']);
      await setLocal({ outboxDropped: [...outboxDropped, ...dropped].slice(-50) });
    }
    await scheduleAlarm(remaining.length);
    return { delivered, pending: remaining.length };
  });
}

export async function pending() {
  const { outbox } = await getLocal(['outbox']);
  return outbox;
}
