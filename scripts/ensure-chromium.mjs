#!/usr/bin/env node
/**
 * Runs after `npm ci` / `npm install` (package.json "postinstall"): the HTML report test opens the
 * report in a real headless browser, Debian's chromium. puppeteer's own Chrome download needs a
 * host these machines cannot reach, so the browser comes from the Debian registry instead.
 *
 * Finds chromium (CHROMIUM_PATH, then the usual paths); if it is missing and this is a Debian-like
 * machine where we are root, installs it with apt-get; otherwise says how to, and never fails the
 * install (the test itself names what is missing).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
const found = () => CANDIDATES.find((p) => p && existsSync(p));

if (process.env.SONDAGE_SKIP_CHROMIUM === '1' || found()) process.exit(0);

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
if (isRoot && existsSync('/usr/bin/apt-get')) {
  console.log('sondage: installing chromium with apt-get (for the HTML report test)…');
  try {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'chromium'], { stdio: ['ignore', 'ignore', 'inherit'], env });
  } catch (err) {
    console.warn(`sondage: apt-get install chromium failed (${err.message}); the HTML report test will fail until it is installed`);
  }
  if (found()) console.log(`sondage: chromium at ${found()}`);
  process.exit(0);
}
console.warn(
  'sondage: chromium not found. The HTML report test needs it: `sudo apt-get install chromium` ' +
    '(Debian/Ubuntu), or set CHROMIUM_PATH to a Chrome or Chromium binary.',
);
