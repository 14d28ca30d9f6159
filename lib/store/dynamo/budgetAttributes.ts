/**
 * The attributes of the budget table (budget.ts) each role writes, for the IAM policies that
 * limit them (infra/constructs/CampaignData.ts: `dynamodb:Attributes`). The cap is the plan's
 * alone: only initCampaign, which the plan runs for `sondage start --aws`, writes `cap_usd`
 * (`fenced_at` is the CLI's `stop`). A worker and the GPU job reserve, settle, commit, merge and
 * orphan reservations and flag an overrun, and write nothing else. test/infra/budgetAccess.test.ts checks this list against every
 * budget write the worker makes in the pipeline tests, so a new attribute cannot slip past it.
 */

/** Key attributes of the budget table, which every write names. */
const KEYS = ['pk', 'sk'] as const;

/** The budget item's money and fence, as reserve, settle, the part commits and flagOverrun move them; never `cap_usd`. */
const BUDGET_ITEM = ['spent_usd', 'reserved_usd', 'headroom_usd', 'possibly_billed_usd', 'orphaned_usd', 'fence', 'overrun_model', 'overrun_at', 'overrun_usd'] as const;

/** A reservation `RES#<id>`: its amount, run and scope (budget.ts `reserve`), and its orphan mark. */
const RESERVATION = ['amount_usd', 'run_id', 'phase', 'model', 'language', 'item_count', 'item_ids', 'orphaned'] as const;

/** What a worker Lambda and a GPU job may write in the budget table. */
export const COMPUTE_BUDGET_ATTRIBUTES: readonly string[] = [...KEYS, ...BUDGET_ITEM, ...RESERVATION];
