import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { tempDir } from './campaignFiles.js';

export * from './campaignFiles.js';

/**
 * A fresh temp folder for each test of the file or describe block it is called in (`'each'`, the
 * default), or one for all of them (`'all'`), removed after them: it registers the hooks that
 * every test file would otherwise repeat. Read `.dir` inside tests and hooks only.
 *
 * @example
 * const tmp = useTempDir('cli-plan');
 * it('…', async () => { await writeCampaign(tmp.dir, 'small.yaml'); });
 */
export function useTempDir(prefix: string, scope: 'each' | 'all' = 'each'): { readonly dir: string } {
  let made: { dir: string; cleanup: () => Promise<void> } | undefined;
  (scope === 'each' ? beforeEach : beforeAll)(async () => {
    made = await tempDir(prefix);
  });
  (scope === 'each' ? afterEach : afterAll)(async () => {
    await made?.cleanup();
    made = undefined;
  });
  return {
    get dir(): string {
      if (made === undefined) throw new Error(`useTempDir('${prefix}'): .dir read outside a test or hook`);
      return made.dir;
    },
  };
}

