/** `{name}` templates: the placeholders a template uses, and the text with them filled. */

const TOKEN = /\{\{|\}\}|\{([a-z_]+)\}/g;

/** The placeholder names a template uses, in order of first use. */
export function placeholdersOf(template: string): string[] {
  const out: string[] = [];
  for (const m of template.matchAll(TOKEN)) if (m[1] !== undefined && !out.includes(m[1])) out.push(m[1]);
  return out;
}

/**
 * Fills a template. Every placeholder must have a value (a missing one is a programming mistake:
 * templates are checked when the campaign loads). Values are inserted as given, never re-scanned.
 * @example renderTemplate('Q: {question} {{x}}', { question: 'Why?' }) === 'Q: Why? {x}'
 */
export function renderTemplate(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(TOKEN, (whole, name: string | undefined) => {
    if (whole === '{{') return '{';
    if (whole === '}}') return '}';
    const v = values[name as string];
    if (v === undefined) throw new RangeError(`renderTemplate: no value for {${name}}`);
    return v;
  });
}
