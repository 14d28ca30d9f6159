/**
 * A real headless browser for the report tests: Debian's chromium (installed by
 * scripts/ensure-chromium.mjs at postinstall) driven by puppeteer-core. A page is opened from a
 * file:// URL with every request intercepted: file: and data: pass, anything else is recorded and
 * refused, so a test can assert that the page never reached for the network.
 */
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import puppeteer from 'puppeteer-core';
import type { Page } from 'puppeteer-core';

/** Where chromium is looked for, in order (the same list as scripts/ensure-chromium.mjs). */
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/**
 * The chromium binary: CHROMIUM_PATH, else the usual Debian paths. Throws (never skips) with the
 * fix when none exists.
 */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env.CHROMIUM_PATH;
  if (explicit) {
    if (existsSync(explicit)) return explicit;
    throw new Error(`CHROMIUM_PATH is ${explicit}, which does not exist; point it at a Chrome or Chromium binary, or unset it and run \`node scripts/ensure-chromium.mjs\``);
  }
  const found = CANDIDATES.find((p) => existsSync(p));
  if (found) return found;
  throw new Error(
    `No chromium found (looked at ${CANDIDATES.join(', ')}). The HTML report test needs a real browser: run \`node scripts/ensure-chromium.mjs\` ` +
      '(installs Debian\'s chromium with apt-get when run as root), or set CHROMIUM_PATH to a Chrome or Chromium binary.',
  );
}

export interface PageVisit<T> {
  /** What `inspect` returned. */
  readonly result: T;
  /** Console messages of type error (CSP violations land here too). */
  readonly consoleErrors: readonly string[];
  /** Uncaught exceptions in the page. */
  readonly pageErrors: readonly string[];
  /** Every URL the page requested (the page itself included). */
  readonly requests: readonly string[];
  /** Requests refused because they were not file: or data:. */
  readonly refused: readonly string[];
}

/**
 * Opens `file` in headless chromium, waits for the load event, runs `inspect`, closes the browser.
 * @example const visit = await visitFile('out/report.html', (page) => page.title());
 */
export async function visitFile<T>(file: string, inspect: (page: Page) => Promise<T>): Promise<PageVisit<T>> {
  const browser = await puppeteer.launch({ executablePath: chromiumPath(), headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  try {
    const page = await browser.newPage();
    const consoleErrors: string[] = [];
    const pageErrors: string[] = [];
    const requests: string[] = [];
    const refused: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => pageErrors.push(e instanceof Error ? e.message : String(e)));
    await page.setRequestInterception(true);
    page.on('request', (req) => {
      const url = req.url();
      requests.push(url);
      if (url.startsWith('file:') || url.startsWith('data:')) {
        void req.continue();
      } else {
        refused.push(url);
        void req.abort('blockedbyclient');
      }
    });
    await page.setViewport({ width: 1200, height: 900 });
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    const result = await inspect(page);
    return { result, consoleErrors, pageErrors, requests, refused };
  } finally {
    await browser.close();
  }
}
