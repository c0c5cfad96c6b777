// URL normalisation: the same rule as server/urls.py (both run fixtures/url-cases.json).
//
// normaliseUrl: http/https only; scheme and host lowercased; host in ASCII (punycode, IDNA 2003
// like Python's "idna" codec) without a trailing dot; default port, user info and fragment
// dropped; tracking parameters dropped (courlan's TRACKERS_RE); remaining parameters sorted by
// name (stable); a trailing slash dropped except at the root.
//
// The parser mirrors Python's urllib.parse.urlsplit rather than the WHATWG URL parser, because
// the two disagree (spaces in paths, backslashes, percent-encoding) and the server decides.

/** Python's `\b` is Unicode-aware; `(?<![\p{L}\p{N}_])` is the same test before a word character. */
export const TRACKERS_RE = new RegExp(
  '^(?:dc|fbc|gc|twc|yc|ysc)lid|^(?:click|gbra|msclk|igsh|partner|wbra)id|' +
    '^(?:ads?|mc|ga|gs|itm|mc|mkt|ml|mtm|oly|pk|utm|vero)_|' +
    '(?:(?<![\\p{L}\\p{N}_])|_)(?:aff|affi|affiliate|campaign|cl?id|eid|ga|gl|kwd|keyword|medium|ref|referr?er|session|source|uid|xtor)',
  'u',
);

export const MAX_URL_CHARS = 4096;
const DEFAULT_PORTS = /** @type {Record<string, number>} */ ({ http: 80, https: 443 });

export class BadUrl extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'BadUrl';
    this.code = 'bad_url';
  }
}

// ---------------------------------------------------------------- host names (UTS #46)

const DOTS = /[.\u3002\uFF0E\uFF61]/u;
const isAscii = (/** @type {string} */ s) => /^[\x00-\x7f]*$/.test(s);

/**
 * A host name as browsers send it (server/urls.py to_ascii): ASCII names are checked for label
 * lengths and kept; internationalised names go through the URL parser's UTS #46 non-transitional
 * processing (`faß.de` is `xn--fa-hia.de`). Throws RangeError for an invalid name.
 * @param {string} input
 */
export function idnaEncode(input) {
  if (!input) return '';
  if (isAscii(input)) {
    const labels = input.split('.');
    for (const label of labels.slice(0, -1)) {
      if (!(label.length > 0 && label.length < 64)) throw new RangeError('label empty or too long');
    }
    if (labels[labels.length - 1].length >= 64) throw new RangeError('label too long');
    return input;
  }
  const labels = input.split(DOTS);
  let trailing = '';
  if (labels.length && !labels[labels.length - 1]) {
    trailing = '.';
    labels.pop();
  }
  if (labels.some((l) => !l)) throw new RangeError('empty label');
  // label by label, under a fixed suffix, so that the URL parser's IPv4 rules (a name ending in
  // a number) never apply to a name
  return labels.map((label) => {
    if (isAscii(label)) return label.toLowerCase();
    let host;
    try {
      host = new URL(`http://${label}.invalid/`).hostname;
    } catch {
      throw new RangeError('invalid internationalised name');
    }
    return host.slice(0, -'.invalid'.length);
  }).join('.') + trailing;
}

// ---------------------------------------------------------------- IP literals (Python ipaddress)

/** IPv4 dotted quad as Python's ipaddress accepts it (no leading zeros), or null. @param {string} s */
export function parseIPv4(s) {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const p of parts) {
    if (!/^[0-9]{1,3}$/.test(p) || (p.length > 1 && p[0] === '0')) return null;
    const n = Number(p);
    if (n > 255) return null;
    value = value * 256 + n;
  }
  return value;
}

/** IPv6 address (optional %scope) as a BigInt, or null. @param {string} s */
export function parseIPv6(s) {
  const addr = s.split('%')[0];
  if (s.includes('%') && !s.split('%').slice(1).join('%')) return null;
  if (!addr || addr.length > 45) return null;
  let parts = addr.split(':');
  if (parts.length < 3) return null;
  /** @type {string[]} */
  let tail = [];
  const last = parts[parts.length - 1];
  if (last.includes('.')) {
    const v4 = parseIPv4(last);
    if (v4 === null) return null;
    parts = parts.slice(0, -1);
    tail = [((v4 >>> 16) & 0xffff).toString(16), (v4 & 0xffff).toString(16)];
    parts.push(...tail);
  }
  if (parts.length > 9) return null;
  const gaps = parts.map((p, i) => (p === '' && i > 0 && i < parts.length - 1 ? i : -1)).filter((i) => i >= 0);
  if (gaps.length > 1) return null;
  let groups;
  if (gaps.length === 1) {
    const i = gaps[0];
    let head = parts.slice(0, i), rest = parts.slice(i + 1);
    if (head.length === 1 && head[0] === '') head = []; else if (head[0] === '') return null;
    if (rest.length === 1 && rest[0] === '') rest = []; else if (rest[rest.length - 1] === '') return null;
    const missing = 8 - head.length - rest.length;
    if (missing < 1) return null;
    groups = [...head, ...Array(missing).fill('0'), ...rest];
  } else {
    if (parts.length !== 8) return null;
    groups = parts;
  }
  let value = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    value = (value << 16n) | BigInt(parseInt(g, 16));
  }
  return value;
}

/** @param {string} s */
export function isIpAddress(s) {
  return parseIPv4(s) !== null || (s.includes(':') && parseIPv6(s) !== null);
}

const V4_PRIVATE = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 29], ['192.0.0.170', 31], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['240.0.0.0', 4], ['255.255.255.255', 32],
];
const V6_PRIVATE = [
  ['::1', 128], ['::', 128], ['100::', 64], ['2001::', 23], ['2001:2::', 48],
  ['2001:db8::', 32], ['2001:10::', 28], ['fc00::', 7], ['fe80::', 10],
];

/**
 * Python's `ip.is_private or ip.is_loopback or ip.is_link_local` (3.11 tables).
 * @param {string} s an address without brackets
 * @returns {boolean | null} null when s is not an address
 */
export function isLocalAddress(s) {
  const v4 = parseIPv4(s);
  if (v4 !== null) {
    return V4_PRIVATE.some(([net, len]) => {
      const base = /** @type {number} */ (parseIPv4(/** @type {string} */ (net)));
      const shift = 32 - /** @type {number} */ (len);
      return shift === 32 || Math.floor(v4 / 2 ** shift) === Math.floor(base / 2 ** shift);
    });
  }
  const v6 = s.includes(':') ? parseIPv6(s) : null;
  if (v6 === null) return null;
  if (v6 >> 32n === 0xffffn) {
    // IPv4-mapped (::ffff:a.b.c.d): judged as the IPv4 address it carries, like the server
    const v4m = Number(v6 & 0xffffffffn);
    return isLocalAddress([24, 16, 8, 0].map((b) => (v4m >>> b) & 255).join('.'));
  }
  return V6_PRIVATE.some(([net, len]) => {
    const base = /** @type {bigint} */ (parseIPv6(/** @type {string} */ (net)));
    const shift = BigInt(128 - /** @type {number} */ (len));
    return v6 >> shift === base >> shift;
  });
}

// ---------------------------------------------------------------- urlsplit (Python urllib.parse)

const SCHEME_CHARS = /^[A-Za-z0-9+\-.]+$/;

/**
 * @typedef {{scheme: string, netloc: string, path: string, query: string, fragment: string,
 *   hostname: string | null, port: number | null}} SplitUrl
 */

/**
 * Python's urlsplit(url) with its .hostname and .port; throws BadUrl where Python raises ValueError.
 * @param {string} input
 * @returns {SplitUrl}
 */
export function urlsplit(input) {
  let url = input.replace(/^[\x00-\x20]+/, '').replace(/[\t\r\n]/g, '');
  let scheme = '', netloc = '', query = '', fragment = '';
  const i = url.indexOf(':');
  if (i > 0 && /^[A-Za-z]/.test(url) && SCHEME_CHARS.test(url.slice(0, i))) {
    scheme = url.slice(0, i).toLowerCase();
    url = url.slice(i + 1);
  }
  if (url.startsWith('//')) {
    let delim = url.length;
    for (const c of '/?#') {
      const w = url.indexOf(c, 2);
      if (w >= 0) delim = Math.min(delim, w);
    }
    netloc = url.slice(2, delim);
    url = url.slice(delim);
    const open = netloc.includes('['), close = netloc.includes(']');
    if (open !== close) throw new BadUrl('url cannot be parsed');
    if (open && close) {
      const br = netloc.slice(netloc.indexOf('[') + 1).split(']')[0];
      if (br.startsWith('v')) {
        if (!/^v[a-fA-F0-9]+\..+$/s.test(br)) throw new BadUrl('url cannot be parsed');
      } else if (!(br.includes(':') && parseIPv6(br) !== null)) {
        throw new BadUrl('url cannot be parsed');
      }
    }
  }
  const hash = url.indexOf('#');
  if (hash >= 0) { fragment = url.slice(hash + 1); url = url.slice(0, hash); }
  const q = url.indexOf('?');
  if (q >= 0) { query = url.slice(q + 1); url = url.slice(0, q); }
  if (!isAscii(netloc)) {
    const n = netloc.replace(/[@:#?]/g, '');
    const n2 = n.normalize('NFKC');
    if (n !== n2 && /[/?#@:]/.test(n2)) throw new BadUrl('url cannot be parsed');
  }
  // .hostname / .port
  const hostinfo = netloc.slice(netloc.lastIndexOf('@') + 1);
  let hostname = '', portText = '';
  const ob = hostinfo.indexOf('[');
  if (ob >= 0) {
    const bracketed = hostinfo.slice(ob + 1);
    const cb = bracketed.indexOf(']');
    hostname = cb >= 0 ? bracketed.slice(0, cb) : bracketed;
    const after = cb >= 0 ? bracketed.slice(cb + 1) : '';
    const colon = after.indexOf(':');
    portText = colon >= 0 ? after.slice(colon + 1) : '';
  } else {
    const colon = hostinfo.indexOf(':');
    hostname = colon >= 0 ? hostinfo.slice(0, colon) : hostinfo;
    portText = colon >= 0 ? hostinfo.slice(colon + 1) : '';
  }
  /** @type {number | null} */
  let port = null;
  if (portText) {
    if (!/^[0-9]+$/.test(portText)) throw new BadUrl('url cannot be parsed');
    port = Number(portText);
    if (port > 65535) throw new BadUrl('url cannot be parsed');
  }
  let host = null;
  if (hostname) {
    const pct = hostname.indexOf('%');
    host = pct >= 0 ? hostname.slice(0, pct).toLowerCase() + hostname.slice(pct) : hostname.toLowerCase();
  }
  return { scheme, netloc, path: url, query, fragment, hostname: host, port };
}

// ---------------------------------------------------------------- query strings (parse_qsl / urlencode)

/** Python's unquote(s, errors="replace"). @param {string} s */
function unquote(s) {
  if (!s.includes('%')) return s;
  return s.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    const bytes = new Uint8Array(run.length / 3);
    for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(run.slice(i * 3 + 1, i * 3 + 3), 16);
    return new TextDecoder('utf-8', { fatal: false, ignoreBOM: true }).decode(bytes);
  });
}

/** Python's parse_qsl(q, keep_blank_values=True). @param {string} q */
export function parseQsl(q) {
  /** @type {[string, string][]} */
  const out = [];
  for (const piece of q.split('&')) {
    if (!piece) continue;
    const eq = piece.indexOf('=');
    const k = eq >= 0 ? piece.slice(0, eq) : piece;
    const v = eq >= 0 ? piece.slice(eq + 1) : '';
    out.push([unquote(k.replace(/\+/g, ' ')), unquote(v.replace(/\+/g, ' '))]);
  }
  return out;
}

/** Python's quote_plus(s, safe=''). @param {string} s */
function quotePlus(s) {
  let out = '';
  for (const byte of new TextEncoder().encode(s.replace(/[\uD800-\uDFFF]/gu, '\uFFFD'))) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9_.\-~]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += '%' + byte.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

/** Python's str ordering: by code point, not UTF-16 unit. @param {string} a @param {string} b */
function cmpCodePoints(a, b) {
  const x = [...a], y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = /** @type {number} */ (x[i].codePointAt(0)) - /** @type {number} */ (y[i].codePointAt(0));
    if (d) return d;
  }
  return x.length - y.length;
}

// ---------------------------------------------------------------- the rule

/** @param {string} host (hostname as urlsplit gives it) */
/**
 * Lowercase, strip a port and trailing dots; IDN to punycode. '' when nothing is left.
 * @param {string} host
 */
export function cleanHost(host) {
  let h = (host || '').trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end > 0 ? h.slice(0, end + 1) : '';
  }
  const colons = (h.match(/:/g) || []).length;
  if (colons === 1) h = h.split(':')[0];
  else if (colons > 1) return `[${h}]`;
  h = h.replace(/\.+$/, '');
  if (!h) return '';
  try {
    h = idnaEncode(h);
  } catch {
    // keep h as it is, like the server
  }
  return h.toLowerCase();
}

/** cleanHost, refusing (BadUrl) an empty host or an invalid internationalised name. @param {string} host */
export function normaliseHost(host) {
  const h = cleanHost(host);
  if (!h) throw new BadUrl('URL has no host');
  if (!isAscii(h)) throw new BadUrl('host is not a valid internationalised name');
  return h;
}

/**
 * The normalised form of a page URL (the one key of "the same page"); throws BadUrl.
 * @param {unknown} raw
 * @returns {string}
 */
export function normaliseUrl(raw) {
  if (typeof raw !== 'string' || !raw.trim()) throw new BadUrl('url is required');
  if ([...raw].length > MAX_URL_CHARS) throw new BadUrl(`url longer than ${MAX_URL_CHARS} characters`);
  const parts = urlsplit(raw.trim());
  const scheme = parts.scheme.toLowerCase();
  if (!(scheme in DEFAULT_PORTS)) throw new BadUrl('only http and https pages can be stored');
  const host = normaliseHost(parts.hostname ?? '');
  const netloc = parts.port === null || parts.port === DEFAULT_PORTS[scheme] ? host : `${host}:${parts.port}`;
  let path = parts.path || '/';
  if (path.length > 1 && path.endsWith('/')) path = path.replace(/\/+$/, '') || '/';
  const query = parseQsl(parts.query).filter(([k]) => !TRACKERS_RE.test(k.toLowerCase()));
  query.sort((a, b) => cmpCodePoints(a[0], b[0]));
  const qs = query.map(([k, v]) => `${quotePlus(k)}=${quotePlus(v)}`).join('&');
  return `${scheme}://${netloc}${path}${qs ? '?' + qs : ''}`;
}

/** normaliseUrl or null (for callers that only need to know "can this page be stored"). @param {unknown} raw */
export function tryNormaliseUrl(raw) {
  try {
    return normaliseUrl(raw);
  } catch {
    return null;
  }
}

/** The normalised host of a URL, or '' when it has none. @param {string} url */
export function hostOf(url) {
  try {
    return normaliseHost(urlsplit(url).hostname ?? '');
  } catch {
    return '';
  }
}

/**
 * A link's URL without its tracking parameters (TRACKERS_RE, the rule normaliseUrl applies);
 * everything else — order, other parameters, the fragment — kept as written. Not http(s): as is.
 * @param {string} url
 * @returns {string}
 */
export function dropTracking(url) {
  const q = url.indexOf('?');
  if (q < 0 || !/^https?:/i.test(url)) return url;
  const hash = url.indexOf('#', q);
  const query = url.slice(q + 1, hash < 0 ? undefined : hash);
  const kept = query.split('&').filter((pair) => {
    if (!pair) return false;
    const key = pair.split('=')[0];
    let name = key;
    try { name = decodeURIComponent(key.replace(/\+/g, ' ')); } catch { /* keep the raw key */ }
    return !TRACKERS_RE.test(name.toLowerCase());
  });
  return url.slice(0, q) + (kept.length ? '?' + kept.join('&') : '') + (hash < 0 ? '' : url.slice(hash));
}

// ---------------------------------------------------------------- "this host or a subdomain of it"
// The one rule (server/urls.py host_or_subdomain mirrors it; both run fixtures/host-cases.json).
// Hosts are compared as cleanHost gives them.

/** An IPv6 literal in brackets or an IP address: it has no parents or subdomains. @param {string} host */
export function isIpLiteral(host) {
  return host.startsWith('[') || isIpAddress(host);
}

/**
 * host itself, then each parent by whole labels (a.b.c -> [a.b.c, b.c, c]); an IP literal only itself.
 * @param {string} host
 * @returns {string[]}
 */
export function hostParents(host) {
  if (!host) return [];
  if (isIpLiteral(host)) return [host];
  const labels = host.split('.');
  return labels.map((_, i) => labels.slice(i).join('.'));
}

/**
 * Is `host` the host `parent` or a subdomain of it, on whole labels?
 * @param {string} host
 * @param {string} parent
 */
export function hostOrSubdomain(host, parent) {
  if (!host || !parent) return false;
  return host === parent || (!isIpLiteral(host) && host.endsWith('.' + parent));
}
