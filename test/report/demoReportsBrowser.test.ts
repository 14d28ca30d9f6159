/**
 * Each battery's demo report in a real browser (Debian's chromium through puppeteer-core): every
 * section of its summary.md has its heading in report.html (or the report section that shows its
 * numbers declares it), the page does not overflow
 * horizontally at 1280 px nor on a 390 px phone, and every chart sits in a figure with a caption
 * and carries a legend. The demos are made small (fewer models or languages) to keep the test fast;
 * the sections and charts are the same.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { REPO_ROOT, tempDir, writeCampaign } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';
import { chromiumPath, visitFile } from '../helpers/browser.js';

/** The little of the DOM the in-page inspection uses (tsconfig has no DOM lib). */
interface PageElement {
  readonly id: string;
  readonly textContent: string | null;
  readonly tagName: string;
  readonly nextElementSibling: PageElement | null;
  readonly parentElement: PageElement | null;
  readonly classList: { contains(name: string): boolean };
  getAttribute(name: string): string | null;
  closest(selector: string): PageElement | null;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement>;
}
declare const document: { readonly documentElement: { readonly scrollWidth: number; readonly clientWidth: number }; querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement> };

interface Layout {
  readonly width: number;
  readonly scrollWidth: number;
  readonly clientWidth: number;
}
interface Seen {
  readonly headings: string[];
  /** Titles of summary.md sections a report section declares it shows besides its own (data-summary). */
  readonly alsoShown: string[];
  readonly charts: { id: string; inFigure: boolean; caption: string; legend: boolean }[];
  readonly layouts: Layout[];
  /** The header's facts, by label. */
  readonly facts: Record<string, string>;
  readonly badge: string;
  /** Captions of the tables with no CSV link right under them (or under their fold). */
  readonly unlinkedTables: string[];
}

/** The paper each battery implements, which its report's sections and figure captions cite. */
const PAPERS: Record<string, string> = {
  far6: 'Same Judgment, Different Yes',
  xvalue: 'Towards Cross-lingual Values Judgment',
  ptrue: 'Disentangling Question, Response, and Verifier Languages',
};

let dir: string;
let cleanup: () => Promise<void>;
const startDir = process.cwd();

/** A demo campaign with its data files by absolute path, trimmed by `edit`. */
async function demo(battery: 'xvalue' | 'ptrue', edit: (doc: Record<string, unknown> & { design: Record<string, unknown>; models: unknown[] }) => void): Promise<string> {
  const folder = path.join(REPO_ROOT, 'examples', battery);
  const doc = parse(await readFile(path.join(folder, 'demo.yaml'), 'utf8')) as Record<string, unknown> & { design: Record<string, unknown>; models: unknown[] };
  for (const key of ['qa_pairs', 'items']) if (typeof doc.design[key] === 'string') doc.design[key] = path.join(folder, doc.design[key] as string);
  doc['data_dir'] = 'data';
  edit(doc);
  const file = path.join(dir, `${battery}.yaml`);
  await writeFile(file, stringify(doc));
  return file;
}

const CAMPAIGNS: Record<string, () => Promise<string>> = {
  far6: () => writeCampaign(dir, 'small.yaml'),
  xvalue: () => demo('xvalue', () => {}),
  ptrue: () =>
    demo('ptrue', (doc) => {
      doc.design['languages'] = ['en', 'zh', 'fr'];
      doc.design['verifier_languages'] = ['en', 'zh', 'fr'];
    }),
};
const reports = new Map<string, { summary: string; seen: Seen; budget: number }>();

beforeAll(async () => {
  chromiumPath();
  ({ dir, cleanup } = await tempDir('demo-reports'));
  process.chdir(dir);
  for (const [battery, make] of Object.entries(CAMPAIGNS)) {
    const file = await make();
    const run = await runMain(['run', file, '--quiet']);
    if (run.code !== 0) throw new Error(`${battery}: run failed: ${run.stderr}`);
    const name = (parse(await readFile(file, 'utf8')) as { name: string }).name;
    const results = path.join(dir, 'data', 'campaigns', name, 'results');
    const visit = await visitFile(path.join(results, 'report.html'), async (page) => {
      const layouts: Layout[] = [];
      for (const width of [1280, 390]) {
        await page.setViewport({ width, height: 900 });
        const m = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth }));
        layouts.push({ width, ...m });
      }
      const inPage = await page.evaluate(() => ({
        headings: [...document.querySelectorAll('h2')].map((h) => (h.textContent ?? '').trim()),
        alsoShown: [...document.querySelectorAll('section[data-summary]')].flatMap((sec) => (sec.getAttribute('data-summary') ?? '').split('|')),
        charts: [...document.querySelectorAll('svg.chart')].map((svg) => {
          const fig = svg.closest('figure');
          return { id: svg.id, inFigure: fig !== null, caption: (fig?.querySelector('figcaption')?.textContent ?? '').trim(), legend: svg.querySelector('.legend') !== null };
        }),
        facts: Object.fromEntries([...document.querySelectorAll('header dl.facts div')].map((d) => [(d.querySelector('dt')?.textContent ?? '').trim(), (d.querySelector('dd')?.textContent ?? '').trim()])),
        badge: (document.querySelectorAll('header h1 .badge')[0]?.textContent ?? '').trim(),
        unlinkedTables: [...document.querySelectorAll('table')]
          .filter((t) => {
            const wrap = t.parentElement;
            const folded = wrap?.parentElement?.tagName === 'DETAILS' ? wrap.parentElement : wrap;
            return !(folded?.nextElementSibling?.classList.contains('csv-link') ?? false);
          })
          .map((t) => (t.querySelector('caption')?.textContent ?? '').trim()),
      }));
      return { ...inPage, layouts };
    });
    expect(visit.pageErrors, `${battery}: page errors`).toEqual([]);
    expect(visit.refused, `${battery}: network requests`).toEqual([]);
    const budget = (parse(await readFile(file, 'utf8')) as { budget_usd: number }).budget_usd;
    reports.set(battery, { summary: await readFile(path.join(results, 'summary.md'), 'utf8'), seen: visit.result, budget });
  }
}, 300_000);

afterAll(async () => {
  process.chdir(startDir);
  await cleanup?.();
});

/** A summary section's title: its `## ` heading without the source in parentheses. */
function titleOf(heading: string): string {
  return heading.replace(/^##\s+/, '').replace(/\s*\(.*$/, '').trim();
}

describe.each(Object.keys(CAMPAIGNS))('the %s demo report in chromium', (battery) => {
  it('has a section for every section of its summary.md', () => {
    const { summary, seen } = reports.get(battery)!;
    const titles = summary.split('\n').filter((l) => l.startsWith('## ')).map(titleOf);
    expect(titles.length).toBeGreaterThan(2);
    // A section is there when an h2 starts with its title, or the report section that shows its numbers declares it.
    const missing = titles.filter((t) => !seen.headings.some((h) => h.toLowerCase().startsWith(t.toLowerCase())) && !seen.alsoShown.includes(t));
    expect(missing, `h2 headings: ${seen.headings.join(' | ')}`).toEqual([]);
  });

  it('does not overflow horizontally at 1280 px nor at 390 px', () => {
    for (const l of reports.get(battery)!.seen.layouts) expect(l.scrollWidth, `${battery} at ${l.width} px`).toBeLessThanOrEqual(l.clientWidth);
  });

  it('puts every chart in a figure with a caption, and gives it a legend', () => {
    const { charts } = reports.get(battery)!.seen;
    expect(charts.length).toBeGreaterThan(0);
    expect(charts.filter((c) => !c.inFigure || c.caption === '').map((c) => c.id), 'charts without a captioned figure').toEqual([]);
    expect(charts.filter((c) => !c.legend).map((c) => c.id), 'charts without a legend').toEqual([]);
  });

  it('is drawn in the shared shell: the SIMULATED badge, the models and the spend against the cap in its header', () => {
    const { seen, budget } = reports.get(battery)!;
    expect(seen.badge).toBe('SIMULATED');
    expect(seen.facts['Campaign']).toBeTruthy();
    expect(seen.facts['Models']).toMatch(/\w/);
    // The simulated replies are priced: something was spent, and the cap is the campaign file's budget_usd.
    expect(seen.facts['Spend']).toMatch(new RegExp(`^\\$\\d[\\d.]* of the \\$${budget} cap \\(\\d+\\.\\d %\\)$`));
    expect(seen.facts['Spend']).not.toMatch(/^\$0 of/);
  });

  it('links a CSV under every table and cites the paper in every figure caption', () => {
    const { seen } = reports.get(battery)!;
    expect(seen.unlinkedTables, 'tables without a CSV link').toEqual([]);
    const paper = PAPERS[battery]!;
    expect(seen.charts.filter((c) => c.inFigure && !c.caption.includes(paper)).map((c) => `${c.id}: ${c.caption}`), `captions not citing ${paper}`).toEqual([]);
  });
});
