/**
 * A ledger lost or deleted while a campaign's replies remain: rebuilt from the stored replies before any call, so that nothing is asked or paid for
 * again and the cap keeps counting what earlier runs spent. Each stored reply part is committed
 * as it is: its items done (an ok attempt) or failed (the last attempt's class decides whether for
 * good), its cost added to the spend once.
 */
import path from 'node:path';
import { SondageError } from '../errors.js';
import { DuckDb, sqlString, tableGlob } from '../store/DuckDb.js';
import { parsePartKey } from '../store/layout.js';
import type { Ledger, ReplyRow } from '../store/types.js';
import type { Plan } from './planCampaign.js';
import { permanentlyFailed } from './attemptVerdict.js';

interface StoredAttempt {
  item_id: string;
  attempt: number;
  status: ReplyRow['status'];
  error_class: string | null;
  cost_usd: number;
  file: string;
}

export interface RebuiltLedger {
  readonly parts: number;
  readonly replies: number;
  readonly spentUsd: number;
}

/**
 * Commits every stored reply part of the campaign's phases that the ledger does not know. Call it
 * after `initCampaign`, when the ledger had no record of the campaign.
 */
export async function rebuildLedger(ledger: Ledger, dataDir: string, campaign: string, phases: readonly string[]): Promise<RebuiltLedger> {
  const root = path.resolve(dataDir);
  const out = { parts: 0, replies: 0, spentUsd: 0 };
  const db = await DuckDb.open();
  try {
    for (const phase of phases) {
      const glob = tableGlob(dataDir, campaign, phase, 'replies');
      if (!(await db.hasFiles(glob))) continue;
      const rows = await db.all<StoredAttempt>(
        `SELECT item_id, attempt, status, error_class, cost_usd, filename AS file
         FROM read_parquet(${sqlString(glob)}, hive_partitioning = true, hive_types_autocast = false, union_by_name = true, filename = true)`,
      );
      const byPart = new Map<string, StoredAttempt[]>();
      for (const r of rows) {
        const list = byPart.get(r.file);
        if (list) list.push(r);
        else byPart.set(r.file, [r]);
      }
      const committed = await ledger.committedParts(campaign, phase);
      for (const [file, attempts] of [...byPart].sort(([a], [b]) => (a < b ? -1 : 1))) {
        const partKey = path.relative(root, file).split(path.sep).join('/');
        if (committed.has(partKey)) continue;
        const parsed = parsePartKey(partKey);
        if (parsed === undefined) throw new SondageError(`${file}: not a replies part of the data dir's layout (campaigns/<c>/<phase>/replies/model=<m>/language=<l>/part-….parquet); the ledger cannot be rebuilt from it`);
        const done = new Set(attempts.filter((a) => a.status === 'ok').map((a) => a.item_id));
        const failedPermanently = permanentlyFailed(attempts, done);
        const settled = new Set([...done, ...failedPermanently]);
        const failed = [...new Set(attempts.filter((a) => !settled.has(a.item_id)).map((a) => a.item_id))];
        const costUsd = attempts.reduce((sum, a) => sum + a.cost_usd, 0);
        await ledger.commitPart({ campaign, phase, model: parsed.model, language: parsed.language, partKey, done: [...done], failed, failedPermanently, costUsd });
        out.parts++;
        out.replies += attempts.length;
        out.spentUsd += costUsd;
      }
    }
  } finally {
    db.close();
  }
  return out;
}

/**
 * Partitions the ledger registered that the plan no longer has (a language, a model or a phase the
 * campaign file dropped): their items retired from the counts, their replies kept. Returns how many.
 */
export async function retireDroppedPartitions(ledger: Ledger, plan: Pick<Plan, 'campaign' | 'partitions'>): Promise<number> {
  const key = (phase: string, model: string, language: string): string => `${phase}\u0000${model}\u0000${language}`;
  const current = new Set((plan.partitions ?? []).flatMap((p) => Object.keys(p.items).map((phase) => key(phase, p.model, p.language))));
  let retired = 0;
  for (const r of await ledger.partitions(plan.campaign)) {
    if (r.items === 0 || current.has(key(r.phase, r.model, r.language))) continue;
    await ledger.registerPartition(plan.campaign, r, []);
    retired++;
  }
  return retired;
}
