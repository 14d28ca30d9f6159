/**
 * What the FAR-6 golden test reads off the code: the expansion of a campaign as ordered lines, and
 * the SQL texts. The only part of the golden test that follows the code when it moves; the values
 * it produces must not change.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { parse, stringify } from 'yaml';
import { writeFullSizeCampaign } from '../../bench/fullSizeCampaign.js';
import { renderJudgeAuditSql } from '../../lib/batteries/far6/analysis/judgeAudit.js';
import { FAR6_SQL } from '../../lib/batteries/far6/sqlLibrary.js';
import { athenaTableSources } from '../../lib/store/AthenaQueryable.js';
import type { RunContext } from '../../lib/run/runCampaign.js';
import { loadContext } from '../helpers/campaigns.js';
import { createHash } from 'node:crypto';

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

/** `phase|model|language|item_id|prompt_key` for every root item of every partition, in expansion order. */
export function goldenCampaignExpansion(ctx: RunContext): string[] {
  const lines: string[] = [];
  for (const model of ctx.campaign.models) {
    for (const language of ctx.battery.languages) {
      for (const item of ctx.battery.expand(model, language)) {
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
  const athena = athenaTableSources('sondage_db', 'far6-demo', ['beta', 'alpha']);
  const out: Record<string, { local: string; athena: string }> = {};
  for (const name of FAR6_SQL.allQueries()) out[name] = { local: sha(FAR6_SQL.render(name, local)), athena: sha(FAR6_SQL.render(name, athena)) };
  out['judge_audit'] = { local: sha(renderJudgeAuditSql(local)), athena: sha(renderJudgeAuditSql(athena)) };
  return out;
}

/** Bring-your-own replies (`sondage analyze --replies`) analysed into `out`. */
export async function goldenByo(replies: string, out: string): Promise<void> {
  const { analyzeReplies } = await import('../../lib/batteries/far6/byo/index.js');
  await analyzeReplies({ replies, out });
}
