/**
 * Report.html opened from disk in a real headless browser (Debian's chromium) renders
 * with no console error, no page error and no network request, with every section and chart.
 */
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slug } from '../../../../lib/report/html/escape.js';
import { RESULT_FILES, writeResults } from '../../../../lib/batteries/far6/report/report.js';
import type { AnalysisResults } from '../../../../lib/batteries/far6/analysis/types.js';
import { chromiumPath, visitFile } from '../../../helpers/browser.js';
import type { PageVisit } from '../../../helpers/browser.js';
import { fixtureResults } from './htmlFixture.js';

/** The little of the DOM the in-page inspection uses (tsconfig has no DOM lib; puppeteer runs the function in the page). */
interface PageElement {
  readonly id: string;
  readonly textContent: string | null;
  readonly children: ArrayLike<PageElement>;
  getAttribute(name: string): string | null;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement>;
  getBoundingClientRect(): { readonly width: number; readonly height: number };
  click(): void;
}
declare const document: { readonly title: string; querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement> };

interface Rendered {
  title: string;
  sections: string[];
  svgCount: number;
  /** SVGs the browser laid out with a nonzero size. */
  svgDrawn: number;
  svgUntitled: number;
  heatmaps: Record<string, number>;
  links: string[];
  /** Sections with a chart but no table behind it. */
  chartsWithoutTable: string[];
  /** The first column of a numeric table before and after clicking its header twice. */
  sortBefore: string[];
  sortAfter: string[];
}

let dir: string;
let results: AnalysisResults;
let visit: PageVisit<Rendered>;

beforeAll(async () => {
  // Named first so that a missing browser fails with the fix, not with a puppeteer stack.
  chromiumPath();
  dir = path.join(tmpdir(), `sondage-html-${process.pid}-${Date.now()}`);
  await mkdir(dir, { recursive: true });
  results = fixtureResults({ models: ['alpha', 'beta', 'gamma'], languages: ['de', 'en', 'ja'], audit: true });
  await writeResults((name, content) => writeFile(path.join(dir, name), content), results, { campaign: 'browser <test>' });
  visit = await visitFile(path.join(dir, 'report.html'), (page) =>
    page.evaluate(() => {
      const svgs = [...document.querySelectorAll('svg.chart')];
      const heatmaps: Record<string, number> = {};
      for (const svg of document.querySelectorAll('svg[id^="hm-"]')) heatmaps[svg.id] = svg.querySelectorAll('rect.hm-cell').length;
      const table = [...document.querySelectorAll('table.sortable')].find((t) => t.querySelector('caption')?.textContent?.includes('Replies per cell'));
      const firstCol = () => [...(table?.querySelectorAll('tbody tr') ?? [])].map((tr) => tr.children[2]?.textContent ?? '');
      const sortBefore = firstCol();
      const th = table?.querySelectorAll('th')[2];
      th?.click();
      th?.click();
      return {
        title: document.title,
        sections: [...document.querySelectorAll('main > section')].map((s) => s.id),
        svgCount: svgs.length,
        svgDrawn: svgs.filter((s) => {
          const r = s.getBoundingClientRect();
          return r.width > 0 && r.height > 0;
        }).length,
        svgUntitled: svgs.filter((s) => !s.querySelector(':scope > title')?.textContent || !s.getAttribute('aria-labelledby')).length,
        heatmaps,
        links: [...document.querySelectorAll('#files a')].map((a) => a.getAttribute('href') ?? ''),
        chartsWithoutTable: [...document.querySelectorAll('main > section')].filter((s) => s.querySelector('svg') && !s.querySelector('details table')).map((s) => s.id),
        sortBefore,
        sortAfter: firstCol(),
      };
    }),
  );
}, 60_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('report.html in headless chromium', () => {
  it('renders with no console error, no page error and no request but the file itself', () => {
    expect(visit.consoleErrors).toEqual([]);
    expect(visit.pageErrors).toEqual([]);
    expect(visit.refused).toEqual([]);
    expect(visit.requests).toHaveLength(1);
    expect(visit.requests[0]).toMatch(/^file:\/\/.*\/report\.html$/);
  });

  it('shows every section, and every chart is laid out with a title', () => {
    const r = visit.result;
    expect(r.title).toBe('FAR-6 analysis: browser <test> (simulated)');
    expect(r.sections).toEqual(['replies', 'convergence', 'disagreement', 'heatmaps', 'identity', 'habits', 'polarity', 'judge-audit', 'files']);
    expect(r.svgCount).toBeGreaterThanOrEqual(15);
    expect(r.svgDrawn).toBe(r.svgCount);
    expect(r.svgUntitled).toBe(0);
    expect(r.chartsWithoutTable).toEqual([]);
  });

  it('draws each between-cell heat map with n × n cells (9 cells: 81)', () => {
    const r = visit.result;
    const readouts = results.identity?.readouts ?? [];
    expect(readouts.length).toBeGreaterThan(0);
    for (const readout of readouts) {
      for (const which of ['story-by-model', 'residual-by-model', 'story-by-language', 'residual-by-language']) {
        expect(r.heatmaps[`hm-${slug(readout)}-${which}`], `${readout} ${which}`).toBe(81);
      }
    }
  });

  it('links to every result file, each of which exists beside the report', async () => {
    const onDisk = await readdir(dir);
    expect(visit.result.links).toEqual(RESULT_FILES.filter((f) => f !== 'report.html'));
    for (const link of visit.result.links) expect(onDisk).toContain(link);
  });

  it('sorts a table by a numeric column from its header', () => {
    const { sortBefore, sortAfter } = visit.result;
    expect(sortBefore).toHaveLength(9);
    expect([...sortAfter].sort()).toEqual([...sortBefore].sort());
    const numbers = sortAfter.map(Number);
    expect(numbers).toEqual([...numbers].sort((a, b) => b - a));
  });
});
