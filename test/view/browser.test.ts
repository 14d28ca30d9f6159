/**
 * `sondage view` driven in a real browser (Debian's chromium through puppeteer-core) on a demo
 * campaign run here: from the campaigns to the overview (progress, spend), to a result table, a
 * click on a cell to exactly the replies it counts, on to one reply with its prompt and readings;
 * then the replies filtered and paged. No console error, no request beyond the viewer.
 */
import puppeteer from 'puppeteer-core';
import type { Browser, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startView } from '../../lib/cli/commands/view.js';
import type { ViewServer } from '../../lib/view/index.js';
import { chromiumPath } from '../helpers/browser.js';
import { DEMO, runDemo } from './demoData.js';

/** The little of the DOM the in-page functions use (tsconfig has no DOM lib). */
interface PageElement {
  readonly textContent: string | null;
  readonly children: ArrayLike<PageElement>;
  getAttribute(name: string): string | null;
}
declare const document: {
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement>;
  readonly body: PageElement;
};

let cleanup: () => Promise<void>;
let server: ViewServer;
let url: string;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];
const foreign: string[] = [];
/** Requests to hold instead of answering, by the start of their path (to answer one late). */
const held = { prefix: '', requests: [] as { continue(): Promise<void> }[] };

/** Waits until the page has rendered the route whose hash starts with `prefix`. */
async function ready(prefix: string): Promise<void> {
  await page.waitForFunction((p: string) => (document.body.getAttribute('data-ready') ?? '').startsWith(p), { timeout: 20_000 }, prefix);
}

/** Forgets the route rendered last, so that `ready` waits for the next one. */
async function forget(): Promise<void> {
  await page.evaluate(() => (document.body as unknown as { removeAttribute(n: string): void }).removeAttribute('data-ready'));
}

/** Clicks, then waits for the route it leads to. */
async function go(selector: string, prefix: string): Promise<void> {
  await forget();
  await page.click(selector);
  await ready(prefix);
}

/** Goes to a route by its hash and waits for it. */
async function visit(hash: string): Promise<void> {
  await forget();
  await page.evaluate((h: string) => ((globalThis as unknown as { location: { hash: string } }).location.hash = h), hash);
  await ready(hash);
}

/** The cells of the rows of a table, as text. */
function rowsOf(id: string): Promise<string[][]> {
  return page.evaluate((tableId: string) => [...document.querySelectorAll(`#${tableId} tbody tr`)].map((tr) => [...(tr.children as unknown as PageElement[])].map((td) => td.textContent ?? '')), id);
}

beforeAll(async () => {
  chromiumPath(); // a missing browser fails with the fix, not a puppeteer stack
  let dataDir: string;
  ({ dataDir, cleanup } = await runDemo('view-browser'));
  ({ server, url } = await startView(['--data-dir', dataDir, '--port', '0']));
  browser = await puppeteer.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  page = await browser.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    if (held.prefix && req.url().startsWith(new URL(held.prefix, server.url).href)) return void held.requests.push(req);
    if (req.url().startsWith(server.url)) return void req.continue();
    foreign.push(req.url());
    void req.abort('blockedbyclient');
  });
  await page.setViewport({ width: 1280, height: 900 });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await cleanup?.();
});

describe('sondage view in chromium', () => {
  it('goes from the campaigns to the overview: progress per phase and spend against the cap', async () => {
    await page.goto(url, { waitUntil: 'load' });
    await ready('/');
    expect(await page.$$eval('#campaigns a.campaign', (as) => as.map((a) => a.textContent))).toEqual([DEMO]);
    await go('#campaigns a.campaign', `/c/${DEMO}`);
    const progress = await rowsOf('progress');
    expect(progress.map((r) => r[0])).toEqual(['defonly', 'step1', 'step3', 'step2']);
    // Every planned item of the finished demo is done.
    for (const r of progress) expect(r[6]).toContain('100.0%');
    expect(await page.$eval('#spend', (p) => p.textContent)).toMatch(/spend: \$\d+\.\d{4} of \$20\.0000 cap/);
    expect(await page.$eval('#failures', (p) => p.textContent)).toBe('failures: none');
    expect(await page.$eval('#throughput', (p) => p.textContent)).toMatch(/replies\/min/);
  });

  it('opens a result table, and a click on a cell reaches exactly the replies it counts', async () => {
    await go('#tables a[href$="/t/cells.csv"]', `/c/${DEMO}/t/cells.csv`);
    const header = await page.$$eval('#result thead th', (ths) => ths.map((th) => th.textContent));
    const first = (await rowsOf('result'))[0]!;
    const cell = Object.fromEntries(header.map((h, i) => [h, first[i]]));
    expect(cell['strategy']).toBe('defonly');
    const accuracy = header.indexOf('accuracy');
    await go(`#result td[data-row="0"][data-column="accuracy"]`, `/c/${DEMO}/r?`);
    expect(accuracy).toBeGreaterThan(0);
    const replies = await rowsOf('replies');
    expect(replies).toHaveLength(Number(cell['n']));
    for (const r of replies) expect([r[0], r[1], r[2]]).toEqual(['defonly', cell['model'], cell['language']]);
    // The filter form shows what the cell chose.
    expect(await page.$eval('select[name=model]', (s) => (s as unknown as { value: string }).value)).toBe(cell['model']);
    expect(await page.$eval('input[name="f.category"]', (s) => (s as unknown as { value: string }).value)).toBe(cell['category']);
  });

  it('reaches one reply: the prompt, the reply, its readings, status and cost', async () => {
    const item = (await rowsOf('replies'))[0]![3]!;
    await go('#replies tbody tr:first-child a', `/c/${DEMO}/reply?`);
    expect(await page.$eval('#reply-title', (h) => h.textContent)).toMatch(/^defonly · /);
    expect(await page.$eval('main', (m) => m.textContent)).toContain(item);
    expect(await page.$$eval('#prompt pre', (ps) => ps.length)).toBeGreaterThan(0);
    expect((await page.$eval('pre.reply-text', (p) => p.textContent))!.length).toBeGreaterThan(0);
    expect(await page.$eval('#attempts', (a) => a.textContent)).toMatch(/ok attempt 1 · \$\d/);
    const readings = await rowsOf('readings');
    expect(readings.map((r) => `${r[1]}/${r[2]}`)).toContain('parse/overall');
  });

  it('filters by model and reader label, searches, and pages', async () => {
    await visit(`/c/${DEMO}/r?phase=defonly`);
    await page.select('select[name=model]', 'alpha');
    await page.select('select[name=reader]', 'parse');
    await page.select('select[name=label]', 'Pass');
    await go('#filters button[type=submit]', `/c/${DEMO}/r?`);
    const firstPage = await rowsOf('replies');
    expect(firstPage.length).toBeGreaterThan(0);
    for (const r of firstPage) {
      expect(r[1]).toBe('alpha');
      expect(r[7]!.split(' ')).toContain('parse/overall=Pass');
    }
    await page.waitForFunction(() => /^\d/.test(document.querySelector('#count')?.textContent ?? ''));
    const total = Number((await page.$eval('#count', (c) => c.textContent))!.replace(/,/g, ''));
    expect(total).toBeGreaterThanOrEqual(firstPage.length);

    // All of model alpha's definition-only replies: 70, two pages of 50.
    await visit(`/c/${DEMO}/r?phase=defonly&model=alpha`);
    const one = await rowsOf('replies');
    expect(one).toHaveLength(50);
    // The count arrives after the page: the link to the next page must not move when it does.
    const nextAt = () => page.$eval('#next', (a) => {
      const { x, y } = (a as unknown as { getBoundingClientRect(): { x: number; y: number } }).getBoundingClientRect();
      return { x, y };
    });
    const before = await nextAt();
    await page.evaluate(() => ((document.querySelector('#count') as unknown as { textContent: string }).textContent = '1,234,567'));
    expect(await nextAt()).toEqual(before);
    await go('#next', `/c/${DEMO}/r?`);
    const two = await rowsOf('replies');
    expect(two.length).toBeGreaterThan(0);
    expect(await page.$('#next')).toBeNull();
    expect(new Set([...one, ...two].map((r) => r[3])).size).toBe(one.length + two.length);
    expect(await page.$eval('#pager', (p) => p.textContent)).toMatch(/replies 51–\d+ of/);

    // Full-text search: a piece of a reply finds that reply again, whatever its case.
    const text = two[0]![8]!;
    const piece = text.length > 60 ? text.slice(30, 60) : text;
    await visit(`/c/${DEMO}/r?${new URLSearchParams({ q: piece.toUpperCase() })}`);
    const found = await rowsOf('replies');
    expect(found.map((r) => r[3])).toContain(two[0]![3]);
  });

  it('draws the page asked for last, when the answer for an earlier one arrives after it', async () => {
    held.prefix = `/api/campaigns/${DEMO}/overview`;
    await forget();
    await page.evaluate((h: string) => ((globalThis as unknown as { location: { hash: string } }).location.hash = h), `/c/${DEMO}`);
    while (held.requests.length === 0) await new Promise((r) => setTimeout(r, 20));
    held.prefix = '';
    await visit(`/c/${DEMO}/r?phase=defonly`);
    for (const req of held.requests.splice(0)) await req.continue();
    // The overview's answer has come back; give the page time to (wrongly) draw it.
    await page.waitForNetworkIdle({ idleTime: 300 });
    expect(await page.$('#replies')).not.toBeNull();
    expect(await page.$('#progress')).toBeNull();
    expect(await page.evaluate(() => document.body.getAttribute('data-ready'))).toBe(`/c/${DEMO}/r?phase=defonly`);
  });

  it('met no console error and asked nothing beyond the viewer', () => {
    expect(consoleErrors).toEqual([]);
    expect(foreign).toEqual([]);
  });
});
