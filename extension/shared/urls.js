// URL normalisation: the same rule as server/urls.py (both run fixtures/url-cases.json).
//
// Parsing is the WHATWG URL standard: the platform `URL` here, ada-url on the server, so both
// read a URL as Chrome and the HTTP client do (`127。0。0。1`, `2130706433`, `0x7f000001`,
// `127.1` are `127.0.0.1`; `chase%2Ecom` is `chase.com`; IDNs by UTS #46 to punycode).
//
// normaliseUrl: http/https only; the WHATWG parse (scheme and host lowercased, host canonical,
// dot segments resolved, default port dropped); user info and fragment dropped; trailing dots of
// the host dropped; tracking parameters dropped (courlan's TRACKERS_RE); remaining parameters
// sorted by name (stable); a trailing slash dropped except at the root.

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

const isAscii = (/** @type {string} */ s) => /^[\x00-\x7f]*$/.test(s);

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
 * The IPv4 address (as a number) an IPv6 address carries, the same rule as server/urls.py
 * embedded_ipv4: mapped ::ffff:a.b.c.d, 6to4 2002:AABB:CCDD::, NAT64 64:ff9b::a.b.c.d,
 * IPv4-compatible ::a.b.c.d (any address in ::/96 but :: and ::1); null otherwise. Teredo is
 * judged as itself (2001::/23: local).
 * @param {bigint} v6
 * @returns {number | null}
 */
export function embeddedIPv4(v6) {
  if (v6 >> 32n === 0xffffn) return Number(v6 & 0xffffffffn);
  if (v6 >> 112n === 0x2002n) return Number((v6 >> 80n) & 0xffffffffn);
  if (v6 >> 32n === 0x64ff9bn << 64n) return Number(v6 & 0xffffffffn);
  if (v6 >> 32n === 0n && v6 > 1n) return Number(v6);
  return null;
}

/**
 * The IPv4 literal an IPv4-mapped IPv6 host spells (`[::ffff:102:304]` -> `1.2.3.4`), so a
 * rule on an IPv4 address also covers it (server/urls.py mapped_ipv4_spelling); null otherwise.
 * @param {string} host a clean host
 * @returns {string | null}
 */
export function mappedIPv4Spelling(host) {
  if (!host.startsWith('[')) return null;
  const v6 = parseIPv6(host.slice(1, -1));
  if (v6 === null || v6 >> 32n !== 0xffffn) return null;
  const v4 = Number(v6 & 0xffffffffn);
  return [24, 16, 8, 0].map((b) => (v4 >>> b) & 255).join('.');
}

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
  const carried = embeddedIPv4(v6);
  if (carried !== null) {
    // judged as the IPv4 address it carries, like the server (resolver.py embedded_ipv4)
    return isLocalAddress([24, 16, 8, 0].map((b) => (carried >>> b) & 255).join('.'));
  }
  return V6_PRIVATE.some(([net, len]) => {
    const base = /** @type {bigint} */ (parseIPv6(/** @type {string} */ (net)));
    const shift = BigInt(128 - /** @type {number} */ (len));
    return v6 >> shift === base >> shift;
  });
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

const HOST_DELIMITERS = /[/\\?#@]/;

/** @param {string} raw @returns {URL | null} */
function parse(raw) {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

// A code point the WHATWG host parser never leaves in a domain (Chrome leaves some: a space
// in a host comes out as `%20`); a host that still holds one cannot be cleaned.
const FORBIDDEN_IN_DOMAIN = /[\x00-\x20#%/:<>?@[\\\]^|\x7f]/;

/**
 * RFC 3492 Punycode decoding of one label's part after `xn--`; null when it is not valid.
 * @param {string} input
 * @returns {string | null}
 */
export function punycodeDecode(input) {
  const base = 36, tMin = 1, tMax = 26, skew = 38, damp = 700, maxInt = 0x7fffffff;
  /** @type {number[]} */
  const output = [];
  const basic = Math.max(input.lastIndexOf('-'), 0);
  for (let j = 0; j < basic; j++) {
    const c = input.charCodeAt(j);
    if (c >= 0x80) return null;
    output.push(c);
  }
  let n = 128, bias = 72, i = 0;
  for (let idx = basic > 0 ? basic + 1 : 0; idx < input.length;) {
    const oldi = i;
    let w = 1;
    for (let k = base; ; k += base) {
      if (idx >= input.length) return null;
      const c = input.charCodeAt(idx++);
      const digit = c >= 48 && c <= 57 ? c - 22 : c >= 65 && c <= 90 ? c - 65 : c >= 97 && c <= 122 ? c - 97 : base;
      if (digit >= base || digit * w > maxInt - i) return null;
      i += digit * w;
      const t = k <= bias ? tMin : k >= bias + tMax ? tMax : k - bias;
      if (digit < t) break;
      if (w > Math.floor(maxInt / (base - t))) return null;
      w *= base - t;
    }
    const len = output.length + 1;
    let delta = oldi === 0 ? Math.floor((i - oldi) / damp) : Math.floor((i - oldi) / 2);
    delta += Math.floor(delta / len);
    let k = 0;
    while (delta > ((base - tMin) * tMax) >> 1) {
      delta = Math.floor(delta / (base - tMin));
      k += base;
    }
    bias = k + Math.floor(((base - tMin + 1) * delta) / (delta + skew));
    n += Math.floor(i / len);
    i %= len;
    if (n > 0x10ffff) return null;
    output.splice(i++, 0, n);
  }
  return String.fromCodePoint(...output);
}

/**
 * Every `xn--` label decodes to a name that encodes back to itself (WHATWG's ToASCII checks
 * this; Chrome does not), as server/urls.py _punycode_ok.
 * @param {string} host
 */
function punycodeOk(host) {
  for (const label of host.split('.')) {
    if (!label.startsWith('xn--')) continue;
    const uni = punycodeDecode(label.slice(4));
    if (!uni || isAscii(uni)) return false;
    const again = parse(`http://${uni}/`);
    if (!again || again.hostname !== label) return false;
  }
  return true;
}

/**
 * A parsed hostname in our form (server/urls.py _finish): trailing dots dropped, punycode
 * verified; '' if it cannot be cleaned.
 * @param {string} hostname
 */
function finish(hostname) {
  const h = hostname.startsWith('[') ? hostname : hostname.replace(/\.+$/, '');
  if (!h || !isAscii(h)) return '';
  if (!h.startsWith('[') && (FORBIDDEN_IN_DOMAIN.test(h) || !punycodeOk(h))) return '';
  return h;
}

/**
 * A host (with or without port, IPv6 with or without brackets) as the WHATWG URL parser reads
 * it in an http URL, without trailing dots. '' when nothing valid is left.
 * @param {string} host
 */
export function cleanHost(host) {
  let h = (host || '').trim();
  if (!h || HOST_DELIMITERS.test(h)) return '';
  if (!h.startsWith('[') && (h.match(/:/g) || []).length > 1) h = `[${h}]`; // a bare IPv6 literal
  const parsed = parse(`http://${h}/`);
  return parsed ? finish(parsed.hostname) : '';
}

/** cleanHost, refusing (BadUrl) an empty host or one that cannot be cleaned. @param {string} host */
export function normaliseHost(host) {
  if (!(host || '').trim()) throw new BadUrl('URL has no host');
  const h = cleanHost(host);
  if (!h) throw new BadUrl('host is not a valid host name');
  return h;
}

/** @param {unknown} raw @returns {URL} */
function parseUrl(raw) {
  if (typeof raw !== 'string' || !raw.trim()) throw new BadUrl('url is required');
  if ([...raw].length > MAX_URL_CHARS) throw new BadUrl(`url longer than ${MAX_URL_CHARS} characters`);
  const parsed = parse(raw);
  if (!parsed) throw new BadUrl('url cannot be parsed');
  return parsed;
}

/**
 * The normalised form of a page URL (the one key of "the same page"); throws BadUrl.
 * @param {unknown} raw
 * @returns {string}
 */
export function normaliseUrl(raw) {
  const parsed = parseUrl(raw);
  const scheme = parsed.protocol.slice(0, -1);
  if (!(scheme in DEFAULT_PORTS)) throw new BadUrl('only http and https pages can be stored');
  const host = finish(parsed.hostname);
  if (!host) throw new BadUrl('host is not a valid host name');
  const netloc = parsed.port ? `${host}:${parsed.port}` : host; // WHATWG already drops a default port
  let path = parsed.pathname || '/';
  if (path.length > 1 && path.endsWith('/')) path = path.replace(/\/+$/, '') || '/';
  const query = parseQsl(parsed.search.slice(1)).filter(([k]) => !TRACKERS_RE.test(k.toLowerCase()));
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
  const parsed = parse(url);
  return parsed ? finish(parsed.hostname) : '';
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
