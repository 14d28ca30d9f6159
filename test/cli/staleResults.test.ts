/**
 * results/ holds exactly the files of the last analysis: a file an earlier analysis wrote and this
 * one did not (a campaign switched to another battery and back) is removed; a file the user put
 * there is not.
 */
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resultsManifestKey } from '../../lib/analysis/analyzeLocal.js';
import { tempDir, writeCampaign } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir('stale-results')));
afterEach(async () => cleanup());

describe('the results folder', () => {
  it('after an analysis holds its files and the files nobody listed; the list of them sits beside it', async () => {
    const file = await writeCampaign(dir, 'small.yaml');
    expect((await runMain(['run', file, '--quiet'])).code).toBe(0);
    const results = path.join(dir, 'data', 'campaigns', 'run-small', 'results');
    const manifest = path.join(dir, 'data', resultsManifestKey('run-small'));
    const listed = JSON.parse(await readFile(manifest, 'utf8')) as string[];
    expect(listed).toContain('summary.md');
    expect(listed.every((name) => existsSync(path.join(results, name)))).toBe(true);

    // What another battery's analysis of the same campaign name left, and a note of the user's.
    await writeFile(path.join(results, 'xvalue_accuracy.csv'), 'model,acc\n');
    await writeFile(manifest, JSON.stringify([...listed, 'xvalue_accuracy.csv']));
    await writeFile(path.join(results, 'my-notes.txt'), 'mine');

    expect((await runMain(['analyze', file])).code).toBe(0);

    expect(existsSync(path.join(results, 'xvalue_accuracy.csv'))).toBe(false);
    expect(await readFile(path.join(results, 'my-notes.txt'), 'utf8')).toBe('mine');
    expect(JSON.parse(await readFile(manifest, 'utf8'))).toEqual(listed);
  });
});
