"""A redeploy that renames CSS-module hashes, applied to a loaded page: every class name, id and
data-testid renamed consistently (one deterministic new name per old name), style sheets and id
references (for, aria-labelledby, aria-describedby, aria-controls, aria-owns, href="#id") kept
pointing at the same elements. Text, structure, ARIA roles and labels and every other data
attribute are untouched. Run RENAME_JS in the page before the content scripts are injected.
"""

from __future__ import annotations

RENAME_JS = r"""() => {
  const fnv = (s) => {
    let h = 0x811c9dc5;
    for (let i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 0x01000193); }
    return (h >>> 0).toString(36);
  };
  const name = (s) => 'r' + fnv(s);
  const REFS = ['for', 'aria-labelledby', 'aria-describedby', 'aria-controls', 'aria-owns',
    'aria-activedescendant'];
  const all = [document.documentElement, ...document.querySelectorAll('*')];
  const visit = (root) => root.querySelectorAll('*').forEach((e) => {
    all.push(e);
    if (e.shadowRoot) visit(e.shadowRoot);
  });
  all.slice().forEach((e) => e.shadowRoot && visit(e.shadowRoot));
  for (const e of all) {
    const cls = e.getAttribute('class');
    if (cls !== null) e.setAttribute('class', cls.split(/\s+/).filter(Boolean).map(name).join(' '));
    if (e.id) e.id = name(e.id);
    const tid = e.getAttribute('data-testid');
    if (tid !== null) e.setAttribute('data-testid', name(tid));
    for (const a of REFS) {
      const v = e.getAttribute(a);
      if (v) e.setAttribute(a, v.split(/\s+/).filter(Boolean).map(name).join(' '));
    }
    const href = e.getAttribute('href');
    if (href && href.startsWith('#') && href.length > 1) e.setAttribute('href', '#' + name(href.slice(1)));
  }
  const unesc = (s) => s.replace(/\\([0-9a-fA-F]{1,6}\s?|.)/g,
    (m, c) => /^[0-9a-fA-F]/.test(c) && c.trim().length > 1 ? String.fromCodePoint(parseInt(c, 16)) : c);
  const fix = (sel) => sel
    .replace(/\.((?:\\.|[\w-])+)/g, (m, c) => '.' + name(unesc(c)))
    .replace(/#((?:\\.|[\w-])+)/g, (m, c) => '#' + name(unesc(c)))
    .replace(/\[data-testid([~|^$*]?=)["']?([^\]"']*)["']?\]/g,
      (m, op, v) => `[data-testid${op}"${op === '=' ? name(v) : v}"]`);
  const rules = (list) => { for (const r of Array.from(list)) {
    if (r.selectorText) { try { r.selectorText = fix(r.selectorText); } catch (e) {} }
    if (r.cssRules) rules(r.cssRules);
  } };
  for (const sheet of Array.from(document.styleSheets)) { try { rules(sheet.cssRules); } catch (e) {} }
  return all.length;
}"""
