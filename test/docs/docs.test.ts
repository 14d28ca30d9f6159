/**
 * The docs are tested: every shell block of README.md and docs/ that can run offline is run (in a
 * scratch copy of the examples, so that nothing lands in the repository's data/), and its exit code
 * checked; every relative link and anchor resolves; the campaign reference page is what the schema
 * gives. Blocks that cannot run here say why in a `<!-- docs-test: skip — … -->` comment above them.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/campaigns.js';
import { deadLinks, docFiles, fileBlocks, runBlock, shellBlocks } from './markdownChecks.js';

const CLI = join(REPO_ROOT, 'bin/sondage.mjs');
const scratch = mkdtempSync(join(tmpdir(), 'sondage-docs-'));
// What the blocks name, as a clone has it: the examples, the committed sample replies, the schema.
for (const dir of ['examples', 'schema', 'test/fixtures/byo']) cpSync(join(REPO_ROOT, dir), join(scratch, dir), { recursive: true });
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const files = docFiles(REPO_ROOT);
const blocks = files.flatMap((f) => shellBlocks(relative(REPO_ROOT, f), readFileSync(f, 'utf8')));
// Files the pages show and then use (the README's campaign), written where the blocks run.
for (const f of files) for (const { name, content } of fileBlocks(readFileSync(f, 'utf8'))) writeFileSync(join(scratch, name), content);

describe('the shell blocks of the docs', () => {
  it('there are blocks to run, and every skipped one says why', () => {
    expect(blocks.filter((b) => !b.skip).length).toBeGreaterThanOrEqual(7);
    for (const b of blocks.filter((x) => x.skip)) expect(b.skip, `${b.file}:${b.line}`).not.toBe('no reason given');
  });

  it.each(blocks.filter((b) => !b.skip).map((b) => [`${b.file}:${b.line}`, b] as const))('%s runs and exits as the page says', (_where, block) => {
    const { code, output } = runBlock(block, scratch, CLI);
    expect(code, `${block.file}:${block.line} exited ${code}:\n${block.code}\n---\n${output.slice(-3000)}`).toBe(block.exit);
  }, 300_000);
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

  it('a failing command fails its block, named by file and line', () => {
    const [bad, expected] = shellBlocks('broken.md', readFileSync(page, 'utf8'));
    expect(bad).toMatchObject({ file: 'broken.md', line: 3, exit: 0 });
    const run = runBlock(bad!, dir, CLI);
    expect(run.code).not.toBe(bad!.exit);
    expect(run.output).not.toContain('never');
    expect(expected).toMatchObject({ line: 10, exit: 3 });
    expect(runBlock(expected!, dir, CLI).code).toBe(3);
  });

  it('a dead link and a dead anchor are reported with their line', () => {
    expect(deadLinks([page], dir)).toEqual(['broken.md:14: missing.md', 'broken.md:14: #nowhere']);
  });
});
