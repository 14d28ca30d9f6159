import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import { runCampaign, type RunContext, type RunSummary } from '../../../lib/run/runCampaign.js';
import { loadContext, tempDir, type CampaignDoc } from '../campaigns.js';
import { far6Campaign } from './campaignFiles.js';

/** A pipeline test's starting point: the FAR-6 campaign written and run locally, the run its deployment is held against. */
export interface LocalFar6Run {
  /** The temp folder; the campaign lives in `<root>/campaign`. */
  readonly root: string;
  readonly cleanup: () => Promise<void>;
  readonly file: string;
  readonly ctx: RunContext;
  readonly local: RunSummary;
}

/** Writes test/fixtures/run/small.yaml as campaign `name` (edited) in a fresh temp folder and runs it locally to the end. */
export async function localFar6Run(prefix: string, name: string, edit: (doc: CampaignDoc) => void): Promise<LocalFar6Run> {
  const { dir: root, cleanup } = await tempDir(prefix);
  const dir = path.join(root, 'campaign');
  await mkdir(dir, { recursive: true });
  const file = await far6Campaign(dir, name, edit);
  const ctx = await loadContext(file);
  const local = await runCampaign(ctx, { dataDir: ctx.dataDir });
  expect(local.stopped).toBeUndefined();
  return { root, cleanup, file, ctx, local };
}
