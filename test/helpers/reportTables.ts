import { expect } from 'vitest';

/**
 * Checks that a battery's report.html shows more than `moreThan` tables and that every one names its CSV
 * right under it (or under the fold that holds it), so the numbers behind any table are one click away.
 */
export function expectCsvLinkUnderEveryTable(html: string, moreThan: number): void {
  const tables = html.match(/<\/table><\/div>(?:<\/details>)?/g) ?? [];
  const linked = html.match(/<\/table><\/div>(?:<\/details>)?<p class="csv-link">/g) ?? [];
  expect(tables.length).toBeGreaterThan(moreThan);
  expect(linked).toHaveLength(tables.length);
}
