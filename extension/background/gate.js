// The one gate of the extension: may this tab be read, may a write carry it? Decided locally,
// before anything about the tab leaves the browser, from the page-memory switch and the cached
// policy snapshot (resolved by shared/resolver.js, the mirror of the server's resolver).
//
//   level    off < suggest < collect     (ordered; anything unknown folds into off)
//   mayRead  level >= suggest            (probe, page match, inserting memory into the page)
//   mayWrite level == collect            (notes, selections, captures, add to library)
//
// Reasons: the resolver's (`rule:<host>`, `sensitive:...`, `default`, `invalid-host`) or the
// gate's own: `memory-off` (the switch is off or the disclosure not accepted), `unsupported`
// (not an http(s) page we could store), `no-policy` (never paired: no snapshot yet).

import { resolve } from '../shared/resolver.js';
import { hostOf, tryNormaliseUrl } from '../shared/urls.js';
import { currentPolicy } from './governance.js';
import { pageMemoryOn } from './store.js';

/** @typedef {'off' | 'suggest' | 'collect'} Level */
/** @typedef {{level: Level, url: string, host: string, reason: string}} Decision */

/** @type {readonly Level[]} in order */
export const LEVELS = Object.freeze(/** @type {Level[]} */ (['off', 'suggest', 'collect']));

/** The rank of a level; anything that is not a level ranks as off. @param {unknown} level */
export function rank(level) {
  const i = LEVELS.indexOf(/** @type {Level} */ (level));
  return i < 0 ? 0 : i;
}

/**
 * The decision for a URL from explicit inputs (pure: what decide() computes from storage).
 * @param {string | undefined} rawUrl
 * @param {{memoryOn: boolean, policy: import('../shared/resolver.js').PolicySnapshot | null | undefined}} inputs
 * @returns {Decision}
 */
export function decideWith(rawUrl, { memoryOn, policy }) {
  const url = typeof rawUrl === 'string' && rawUrl ? tryNormaliseUrl(rawUrl) : null;
  if (!memoryOn) return { level: 'off', url: url || '', host: url ? hostOf(url) : '', reason: 'memory-off' };
  if (!url) return { level: 'off', url: '', host: '', reason: 'unsupported' };
  const host = hostOf(url);
  if (!policy) return { level: 'off', url, host, reason: 'no-policy' };
  const r = resolve(host, policy);
  return { level: LEVELS[rank(r.mode)], url, host: r.host, reason: r.reason };
}

/**
 * The decision for a tab's URL, from the page-memory switch and the cached policy snapshot.
 * @param {string | undefined} rawUrl
 * @returns {Promise<Decision>}
 */
export async function decide(rawUrl) {
  const memoryOn = await pageMemoryOn();
  return decideWith(rawUrl, { memoryOn, policy: memoryOn ? await currentPolicy() : null });
}

/** May the tab be read (probed, matched, written into)? @param {Decision} d */
export const mayRead = (d) => rank(d.level) >= rank('suggest');

/** May a write carry the tab's page? @param {Decision} d */
export const mayWrite = (d) => rank(d.level) >= rank('collect');
