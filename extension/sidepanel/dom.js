// DOM helpers shared by the panel's views. Nodes are built with textContent only, never innerHTML.

/** @param {string} id */
export const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));

/**
 * @param {string} tag
 * @param {{class?: string, text?: string, attrs?: Record<string, string>}} [opts]
 * @param {(Node | string | null | false | undefined)[]} [children]
 */
export function el(tag, opts = {}, children = []) {
  const node = document.createElement(tag);
  if (opts.class) node.className = opts.class;
  if (opts.text !== undefined) node.textContent = opts.text;
  for (const [k, v] of Object.entries(opts.attrs || {})) node.setAttribute(k, v);
  for (const c of children) if (c) node.append(c);
  return node;
}
