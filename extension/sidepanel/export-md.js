// A captured conversation as a Markdown file: YAML front matter (title, url, site, captured),
// then each turn under a heading naming who spoke. Pure functions (tested under node).

/**
 * @typedef {{role: string, text: string, markdown?: string}} Turn
 * @typedef {{url: string, title?: string | null, site?: string | null, source_host?: string | null,
 *   captured_at?: number | null, turns: Turn[]}} Conversation
 */

const WHO = /** @type {Record<string, string>} */ ({ user: 'You', assistant: 'Assistant', system: 'System', tool: 'Tool' });

/** A YAML scalar: a JSON string is a valid YAML double-quoted scalar. @param {string} s */
const yamlString = (s) => JSON.stringify(String(s));

/** @param {number | null | undefined} seconds epoch seconds @returns {string} ISO 8601 UTC, or '' */
export function isoTime(seconds) {
  if (typeof seconds !== 'number' || !Number.isFinite(seconds)) return '';
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The text of a turn as Markdown: the captured Markdown when there is one, else its text. @param {Turn} t */
export const turnMarkdown = (t) => (typeof t.markdown === 'string' && t.markdown.trim() ? t.markdown : t.text);

/** @param {Conversation} c @returns {string} */
export function conversationMarkdown(c) {
  const title = c.title || c.url;
  const lines = [
    '---',
    `title: ${yamlString(title)}`,
    `url: ${yamlString(c.url)}`,
    `site: ${yamlString(c.site || c.source_host || '')}`,
    `captured: ${yamlString(isoTime(c.captured_at))}`,
    '---',
    '',
    `# ${title.replace(/\s+/g, ' ')}`,
    '',
  ];
  for (const t of c.turns) {
    lines.push(`## ${WHO[t.role] || t.role}`, '', turnMarkdown(t).replace(/\s+$/, ''), '');
  }
  return lines.join('\n');
}

/** A safe file name from the title: letters, digits, dashes; never empty. @param {Conversation} c */
export function fileName(c) {
  const base = String(c.title || c.source_host || 'conversation')
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '');
  return `${base || 'conversation'}.md`;
}
