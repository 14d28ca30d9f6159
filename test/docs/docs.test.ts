/**
 * The docs are tested: every shell block of README.md and docs/ that can run offline is run (in a
 * scratch copy of the examples, so that nothing lands in the repository's data/), and its exit code
 * checked; every relative link and anchor resolves; the campaign reference page is what the schema
 * gives. Blocks that cannot run here say why in a `<!-- docs-test: skip — … -->` comment above them.
 *
 * Each page's blocks run in order in a scratch folder of their own, two pages at a time (the demos
 * are CPU-bound; more lanes than the machine's two cores only slow every block). The pages that run
 * the demos again (they name a `demo.yaml`) start from a copy of the README's scratch folder once
 * the README's demos ran, as when every block shared one folder: their `run` resumes a complete
 * campaign, their `--data-dir elsewhere` runs afresh. The other pages start from a clean copy at once.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/campaigns.js';
import { blockEnv, deadLinks, docFiles, fileBlocks, runBlock, shellBlocks, type ShellBlock } from './markdownChecks.js';

const CLI = join(REPO_ROOT, 'bin/sondage.mjs');
const files = docFiles(REPO_ROOT);
const blocks = files.flatMap((f) => shellBlocks(relative(REPO_ROOT, f), readFileSync(f, 'utf8')));
const runnable = blocks.filter((b) => !b.skip);

const scratches: string[] = [];
afterAll(() => {
  for (const dir of scratches) rmSync(dir, { recursive: true, force: true });
});

/**
 * A scratch folder: a copy of `from`, or what the blocks name as a clone has it (the examples, the
 * committed sample replies, the schema) and the files the pages show and then use (the README's campaign).
 */
function scratch(from?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'sondage-docs-'));
  scratches.push(dir);
  if (from) {
    cpSync(from, dir, { recursive: true });
    return dir;
  }
  for (const sub of ['examples', 'schema', 'test/fixtures/byo']) cpSync(join(REPO_ROOT, sub), join(dir, sub), { recursive: true });
  for (const f of files) for (const { name, content } of fileBlocks(readFileSync(f, 'utf8'))) writeFileSync(join(dir, name), content);
  return dir;
}

type Outcome = { code: number; output: string };

/** Each runnable block's outcome, once its page's lane reaches it; started in the describe's beforeAll. */
const outcomes = new Map<ShellBlock, Promise<Outcome>>();
function startPages(): void {
  const settle = new Map<ShellBlock, (r: Outcome) => void>();
  for (const b of runnable) outcomes.set(b, new Promise((resolve) => settle.set(b, resolve)));
  /** Runs a page's blocks in its order, each whatever the one before it did; resolves with its folder. */
  const runPage = async (page: readonly ShellBlock[], from?: Promise<string>): Promise<string | undefined> => {
    try {
      const dir = scratch(from && (await from));
      for (const b of page) settle.get(b)!(await runBlock(b, dir, CLI));
      return dir;
    } catch (e) {
      // A scratch folder that cannot be made fails the page's blocks rather than leaving them waiting.
      for (const b of page) settle.get(b)!({ code: -1, output: `scratch folder failed: ${String(e)}` });
      return undefined;
    }
  };
  const pages = [...new Set(runnable.map((b) => b.file))].map((file) => runnable.filter((b) => b.file === file));
  const runsDemos = (page: readonly ShellBlock[]) => page.some((b) => /\bdemo\.yaml\b/.test(b.code));
  const readme = pages.filter((page) => page[0]!.file === 'README.md');
  const demoPages = pages.filter((page) => page[0]!.file !== 'README.md' && runsDemos(page));
  const otherPages = pages.filter((page) => page[0]!.file !== 'README.md' && !runsDemos(page));
  const readmeScratch = (async () => (await runPage(readme.flat())) ?? Promise.reject(new Error("the README's blocks could not run")))();
  // Lane one: the README, then demo pages; lane two: the pages that need nothing of the README,
  // then demo pages. A demo page's scratch folder waits for the README's (readmeScratch).
  const lane = async (first: readonly (readonly ShellBlock[])[]): Promise<void> => {
    for (const page of first) await runPage(page);
    for (let page = demoPages.shift(); page; page = demoPages.shift()) await runPage(page, readmeScratch);
  };
  void readmeScratch.catch(() => undefined).then(() => lane([]));
  void lane(otherPages);
}

describe('the shell blocks of the docs', () => {
  beforeAll(startPages);

  it('there are blocks to run, and every skipped one says why', () => {
    expect(runnable.length).toBeGreaterThanOrEqual(7);
    for (const b of blocks.filter((x) => x.skip)) expect(b.skip, `${b.file}:${b.line}`).not.toBe('no reason given');
  });

  // The timeout covers the wait for the blocks ahead of this one; runBlock's own limit (240 s a block) stops a block that hangs.
  it.each(runnable.map((b) => [`${b.file}:${b.line}`, b] as const))('%s runs and exits as the page says', async (_where, block) => {
    const { code, output } = await outcomes.get(block)!;
    expect(code, `${block.file}:${block.line} exited ${code}:\n${block.code}\n---\n${output.slice(-3000)}`).toBe(block.exit);
  }, 900_000);
});

describe('the links of the docs', () => {
  it('every relative link and anchor resolves', () => {
    expect(deadLinks(files, REPO_ROOT)).toEqual([]);
  });
});

describe('the campaign reference page', () => {
  it('is what scripts/campaign-reference.mjs makes of the schema', () => {
    const made = execFileSync(process.execPath, [join(REPO_ROOT, 'scripts/campaign-reference.mjs'), '--stdout'], { encoding: 'utf8' });
    expect(made, 'docs/campaign-reference.md is stale: run npm run docs:reference').toBe(readFileSync(join(REPO_ROOT, 'docs/campaign-reference.md'), 'utf8'));
  });
});

describe('the checks themselves catch a broken page', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sondage-docs-broken-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const page = join(dir, 'broken.md');
  writeFileSync(
    page,
    [
      '# A page',
      '',
      '```sh',
      'echo fine',
      'false',
      'echo never',
      '```',
      '',
      '<!-- docs-test: exit 3 -->',
      '```bash',
      'exit 3',
      '```',
      '',
      'See [a page that is not there](missing.md) and [a heading that is not there](#nowhere) and [this one](#a-page).',
    ].join('\n'),
  );

  it('a failing command fails its block, named by file and line', async () => {
    const [bad, expected] = shellBlocks('broken.md', readFileSync(page, 'utf8'));
    expect(bad).toMatchObject({ file: 'broken.md', line: 3, exit: 0 });
    const run = await runBlock(bad!, dir, CLI);
    expect(run.code).not.toBe(bad!.exit);
    expect(run.output).not.toContain('never');
    expect(expected).toMatchObject({ line: 10, exit: 3 });
    expect((await runBlock(expected!, dir, CLI)).code).toBe(3);
  });

  it('a block never sees provider keys or AWS credentials', () => {
    const env = blockEnv({ PATH: '/bin', OPENAI_API_KEY: 'sk-x', AWS_SECRET_ACCESS_KEY: 'x', HF_TOKEN: 'x', HOME: '/root' });
    expect(Object.keys(env).sort()).toEqual(['HOME', 'NO_COLOR', 'PATH', 'npm_config_offline']);
  });

  it('a dead link and a dead anchor are reported with their line', () => {
    expect(deadLinks([page], dir)).toEqual(['broken.md:14: missing.md', 'broken.md:14: #nowhere']);
  });
});
