// Site modes resolved offline from the policy snapshot (GET /api/policy). The same rule as
// server/governance/resolver.py; both run fixtures/policy-cases.json.
//
// 1. the most specific user rule whose host equals the host or is a parent of it (whole labels);
// 2. a sensitive default matched the same way (a domain entry, a suffix rule such as `bank`, or a
//    first-label rule such as `login.` on a host of three labels or more) — and a sensitive
//    default on a MORE specific host than the winning user rule beats that rule;
// 3. the global default.
// IP literals and single-label names match only exactly. A rule the snapshot marks `exact` (a
// rule on a public suffix such as `wiki` or `com`) covers only its own host; a rule on an IPv4
// address also covers its IPv4-mapped IPv6 spelling. The result carries its reason.

import { cleanHost, isIpLiteral, hostParents, isLocalAddress, mappedIPv4Spelling } from './urls.js';

export { cleanHost }; // the host rule lives with the URL rule (one decider), as in server/urls.py

/** @typedef {'off' | 'suggest' | 'collect'} Mode */
/**
 * @typedef {{domains?: Record<string, string>, suffixes?: Record<string, string>,
 *   labels?: Record<string, string>, exact?: Record<string, string>}} Sensitive
 * @typedef {{version?: string, global_default?: Mode, rules?: {host: string, mode: Mode, exact?: boolean}[],
 *   sensitive?: Sensitive, limits?: Record<string, number>}} PolicySnapshot
 * @typedef {{host: string, mode: Mode, reason: string}} Resolution
 */

export const MODES = /** @type {const} */ (['off', 'suggest', 'collect']);

export { isIpLiteral }; // the host rule lives with the URL rule (shared/urls.js)
const parents = hostParents;

/** @param {string} host */
function depth(host) {
  return isIpLiteral(host) ? 1 : host.split('.').length;
}

const own = (/** @type {object} */ o, /** @type {string} */ k) => Object.prototype.hasOwnProperty.call(o, k);

/**
 * The most specific sensitive match.
 * @param {string} host
 * @param {Sensitive} sensitive
 * @returns {[number, string] | null}
 */
function sensitiveMatch(host, sensitive) {
  const domains = sensitive.domains || {}, suffixes = sensitive.suffixes || {};
  const labels = sensitive.labels || {}, exact = sensitive.exact || {};
  if (own(exact, host)) return [depth(host), `sensitive:${exact[host]}:${host}`];
  if (isIpLiteral(host)) {
    const local = isLocalAddress(host.replace(/^\[+|\]+$/g, ''));
    return local ? [1, `sensitive:local:${host}`] : null;
  }
  /** @type {[number, string] | null} */
  let best = null;
  const parts = parents(host);
  for (const cand of parts) {
    if (own(domains, cand)) {
      best = [depth(cand), `sensitive:${domains[cand]}:${cand}`];
      break;
    }
  }
  if (best === null) {
    for (const cand of parts.slice(1)) {
      if (own(suffixes, cand)) {
        best = [depth(cand), `sensitive:${suffixes[cand]}:*.${cand}`];
        break;
      }
    }
  }
  const first = host.split('.')[0];
  if (own(labels, first) && depth(host) >= 3) {
    const d = depth(host);
    if (best === null || d > best[0]) best = [d, `sensitive:${labels[first]}:${first}.*`];
  }
  return best;
}

/**
 * @param {string} host
 * @param {PolicySnapshot | null | undefined} snapshot
 * @returns {Resolution}
 */
export function resolve(host, snapshot) {
  const snap = snapshot || {};
  const h = cleanHost(host);
  const fallback = snap.global_default || 'collect';
  if (!h) return { host: h, mode: 'off', reason: 'invalid-host' };
  /** @type {Map<string, Mode>} */
  const rules = new Map();
  /** @type {Set<string>} */
  const exact = new Set();
  for (const r of snap.rules || []) {
    rules.set(r.host, r.mode);
    if (r.exact) exact.add(r.host);
  }
  const mapped = mappedIPv4Spelling(h);
  /** @type {[number, string] | null} */
  let rule = null;
  for (const cand of mapped ? [h, mapped] : parents(h)) {
    if (rules.has(cand) && (cand === h || cand === mapped || !exact.has(cand))) {
      rule = [depth(cand), cand];
      break;
    }
  }
  const sens = sensitiveMatch(h, snap.sensitive || {});
  if (rule !== null && (sens === null || rule[0] >= sens[0])) {
    return { host: h, mode: /** @type {Mode} */ (rules.get(rule[1])), reason: `rule:${rule[1]}` };
  }
  if (sens !== null) return { host: h, mode: 'off', reason: sens[1] };
  return { host: h, mode: fallback, reason: 'default' };
}
