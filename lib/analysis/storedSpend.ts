/**
 * What a campaign spent, for the report's header: the cost of every stored reply — every phase,
 * attempt, model and language, those the design has since dropped too (they were paid for) — so
 * the figure is read from the data and a second analysis, local or on Athena, reproduces it.
 * Instance time of GPU jobs is settled in the ledger, not in replies (docs/gpu.md); `status` shows it.
 */
import type { Campaign } from '../design/campaign.js';
import { campaignEntries } from '../design/campaign.js';
import { analysisQueryError } from '../query/errors.js';
import type { Queryable } from '../query/types.js';
import type { ReportSpend } from '../report/spend.js';

/** The query's name in messages and in the report Lambda's rounds (a battery's queries are named by their .sql file). */
export const STORED_SPEND_QUERY = 'stored_spend';

/**
 * The sum of `cost_usd` over `source` (a replies table or subquery); 0 when nothing is stored.
 * @example await storedSpend(db, parquetSource(globs))
 */
export async function storedSpend(db: Queryable, source: string | undefined): Promise<number> {
  if (source === undefined) return 0;
  const [row] = await db.all<{ usd: unknown }>(`SELECT sum(cost_usd) AS usd FROM ${source}`).catch((err: unknown) => {
    throw analysisQueryError(STORED_SPEND_QUERY, err);
  });
  const usd = Number(row?.usd ?? 0);
  return Number.isFinite(usd) ? usd : 0;
}

/**
 * The spend an AWS report shows: the stored replies' cost against the cap, as locally — except
 * for a campaign with a `runs_on: gpu` model, whose GPU jobs settle instance time in the ledger
 * and store its replies at $0 (lib/gpu/instanceTime.ts): there the replies' cost would understate
 * the spend, so the row is left out and `sondage status --aws` gives the ledger's figure (and any
 * overrun). Elsewhere `overrun` is the ledger's record of usage past what calls reserved.
 */
export function awsReportSpend(
  campaign: Campaign,
  spentUsd: number,
  overrun: { readonly model: string; readonly excessUsd: number } | undefined,
): ReportSpend | undefined {
  if (campaignEntries(campaign).some((m) => m.runs_on === 'gpu')) return undefined;
  return { spentUsd, capUsd: campaign.budget_usd, ...(overrun ? { overrun: { model: overrun.model, excessUsd: overrun.excessUsd } } : {}) };
}
