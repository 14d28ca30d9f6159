/**
 * Totals count what the analysis uses. An edit that drops items (fewer stories) leaves their paid
 * replies stored; `reply_totals.csv` and the summary's "Attempts stored" line must then equal a
 * fresh run of the edited file, with the stored replies outside the design counted apart.
 */
import { mkdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { loadContext, tempDir, writeCampaign } from '../helpers/campaigns.js';
import { readResult } from '../helpers/runData.js';

const CAMPAIGN = 'run-small';
let root: { dir: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  root = await tempDir('dropped-totals');
});
afterAll(async () => root.cleanup());

/** reply_totals.csv as records (CRLF lines). */
function totals(csv: string): Record<string, string>[] {
  const [header, ...lines] = csv.trim().split(/\r?\n/);
  const names = header!.split(',');
  return lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [names[i]!, v])));
}

describe('totals after an edit that drops items', () => {
  it('reply_totals.csv and "Attempts stored" equal a fresh run of the edited design; the dropped items are counted apart', async () => {
    const small = (limit: number) => (doc: { design: Record<string, unknown> }) => {
      doc.design['languages'] = ['en'];
      doc.design['story_limit'] = limit;
    };
    // A campaign run with four stories, then edited down to two and run again.
    const editedFile = await writeCampaign(root.dir, 'small.yaml', small(4), 'edited.yaml');
    await runCampaign(await loadContext(editedFile), { signal: new AbortController().signal });
    await writeCampaign(root.dir, 'small.yaml', small(2), 'edited.yaml');
    const edited = await loadContext(editedFile);
    await runCampaign(edited, { signal: new AbortController().signal });
    // The same two-story design, run fresh in a folder of its own.
    const freshDir = `${root.dir}/fresh`;
    await mkdir(freshDir);
    const freshFile = await writeCampaign(freshDir, 'small.yaml', small(2));
    const fresh = await loadContext(freshFile);
    await runCampaign(fresh, { signal: new AbortController().signal });

    const a = totals(await readResult(edited.dataDir, CAMPAIGN, 'reply_totals.csv'));
    const b = totals(await readResult(fresh.dataDir, CAMPAIGN, 'reply_totals.csv'));
    const counted = (rows: Record<string, string>[]) => rows.map((r) => ({ model: r['model'], attempts: r['attempts'], ok: r['ok_attempts'], items: r['items_ok'], simulated: r['simulated_attempts'], cost: Number(r['cost_usd']).toFixed(6) }));
    expect(counted(a)).toEqual(counted(b));
    // The replies of the two dropped stories are stored and counted apart, with their cost.
    expect(a.every((r) => Number(r['attempts_outside_design']) > 0 && Number(r['cost_outside_design_usd']) > 0)).toBe(true);
    expect(b.every((r) => r['attempts_outside_design'] === '0')).toBe(true);

    const line = (md: string) => /- Attempts stored: .*/.exec(md)?.[0];
    const editedSummary = await readResult(edited.dataDir, CAMPAIGN, 'summary.md');
    expect(line(editedSummary)).toBe(line(await readResult(fresh.dataDir, CAMPAIGN, 'summary.md')));
    expect(editedSummary).toMatch(/- Outside the design as it stands \(items an edit dropped; stored, not analysed\): \d+ attempts, cost \$\d+\.\d{4}/);
  }, 180_000);
});
