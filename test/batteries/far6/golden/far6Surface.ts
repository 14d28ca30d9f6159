/**
 * What the FAR-6 golden test reads off the code: the expansion of a campaign as ordered lines, and
 * the SQL texts. The only part of the golden test that follows the code when it moves; the values
 * it produces must not change.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { parse, stringify } from 'yaml';
import { writeFullSizeCampaign } from '../../../../bench/fullSizeCampaign.js';
import { renderJudgeAuditSql } from '../../../../lib/batteries/far6/analysis/judgeAudit.js';
import { FAR6_SQL } from '../../../../lib/batteries/far6/sqlLibrary.js';
import { athenaSources } from '../../../../lib/analysis/athena.js';
import type { RunContext } from '../../../../lib/run/runCampaign.js';
import { PartitionItems } from '../../../../lib/run/partitionItems.js';
import { analyzeReplies } from '../../../../lib/analysis/analyzeReplies.js';
import { far6 } from '../../../../lib/batteries/far6/index.js';
import { loadContext } from '../../../helpers/campaigns.js';
import { createHash } from 'node:crypto';

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

/** `phase|model|language|item_id|prompt_key` for every root item of every partition, in expansion order. */
export function goldenCampaignExpansion(ctx: RunContext): string[] {
  const lines: string[] = [];
  for (const model of ctx.campaign.models) {
    for (const language of ctx.design.languages) {
      for (const item of new PartitionItems({ ctx, model, language }).items('generate')) {
        lines.push(`${item.phase}|${item.model}|${item.language}|${item.item_id}|${item.prompt_key}`);
      }
    }
  }
  return lines;
}

/** The expansion of the full-size synthetic design (2 of its models), optionally with story_limit. */
export async function goldenExpansion(dir: string, opts: { readonly storyLimit?: number }): Promise<string[]> {
  const file = await writeFullSizeCampaign(dir, { models: 2 }, `full-${opts.storyLimit ?? 'all'}.yaml`);
  if (opts.storyLimit !== undefined) {
    const doc = parse(await readFile(file, 'utf8')) as { design: Record<string, unknown> };
    doc.design['story_limit'] = opts.storyLimit;
    await writeFile(file, stringify(doc));
  }
  return goldenCampaignExpansion(await loadContext(file));
}

/** sha256 of every analysis query rendered with local-style and with Athena sources. */
export function goldenSqlRenders(): Record<string, { local: string; athena: string }> {
  const local = { prompts: '(PROMPTS)', replies: '(REPLIES)', readings: '(READINGS)' };
  const a = athenaSources('sondage_db', 'far6', 'far6-demo', ['beta', 'alpha']);
  const athena = { prompts: a.table('prompts', ['generate']), replies: a.table('replies', ['generate']), readings: a.table('readings', ['generate']) };
  const out: Record<string, { local: string; athena: string }> = {};
  for (const name of FAR6_SQL.allQueries()) out[name] = { local: sha(FAR6_SQL.render(name, local)), athena: sha(FAR6_SQL.render(name, athena)) };
  out['judge_audit'] = { local: sha(renderJudgeAuditSql(local)), athena: sha(renderJudgeAuditSql(athena)) };
  return out;
}

/** Bring-your-own replies (`sondage analyze --replies`) analysed into `out`. */
export async function goldenByo(replies: string, out: string): Promise<void> {
  await analyzeReplies(far6, { replies, out });
}
