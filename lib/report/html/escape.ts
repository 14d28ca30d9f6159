/**
 * Escaping for text and attribute values in HTML and inline SVG. Model names, readers, story
 * groups and wordings come from user files (campaign YAML, BYO replies), so every string that
 * reaches the page passes through here.
 */

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Text safe inside an element or a quoted attribute.
 * @example escapeHtml('<b>"x"</b>') === '&lt;b&gt;&quot;x&quot;&lt;/b&gt;'
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ENTITIES[ch] ?? ch);
}

/** A string usable as an id or a fragment (`#…`): letters, digits and `-` only, never empty. */
export function slug(text: string): string {
  const s = text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  return s || 'x';
}
