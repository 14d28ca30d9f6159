/**
 * Labelled lines of a free-text reply: "Verdict: Fail", "**结论**：不通过", "- B — Fail (reason)".
 * Each line with a separator (`:` `：` `=`, or a dash between spaces) gives a key (keyOf) and the
 * text after it; a line "Sentences:" followed by bullet lines gives the bullets as its value list.
 */
import { keyOf, stripMarkup } from './normalize.js';

export interface LabelledLine {
  readonly key: string;
  readonly value: string;
  /** Bullet or numbered lines that follow a label with no value on its own line. */
  readonly items: readonly string[];
}

const SEPARATOR = /\s*[:：=]\s*|\s+[-–—]\s+/u;
const BULLET = /^\s*(?:[-*•·]|\d+[.)]|[（(]?\d+[)）])\s+/u;

/**
 * The labelled lines of a text, in order.
 * @example labelledLines('Verdict: Fail\nReason: …')[0] // { key: 'verdict', value: 'Fail', items: [] }
 */
export function labelledLines(text: string): LabelledLine[] {
  const lines = text.split(/\r?\n/);
  const out: LabelledLine[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = stripMarkup(lines[i] as string).replace(BULLET, '').trim();
    const m = SEPARATOR.exec(line);
    if (!m || m.index === 0) continue;
    const key = keyOf(line.slice(0, m.index));
    // A label is a short name, not a sentence that happens to contain a colon.
    if (key === '' || key.length > 40) continue;
    const value = line.slice(m.index + m[0].length).trim();
    const items: string[] = [];
    if (value === '') {
      for (let j = i + 1; j < lines.length && BULLET.test(lines[j] as string); j++) {
        items.push(stripMarkup((lines[j] as string).replace(BULLET, '')).trim());
      }
    }
    out.push({ key, value, items });
  }
  return out;
}
