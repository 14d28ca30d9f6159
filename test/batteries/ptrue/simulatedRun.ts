/**
 * A campaign run in memory, without the core runtime: for each simulated model and question
 * language, the battery's own expand and read functions and its simulator, in phase order
 * (generate → verify and judge), readings of the judge stored on the generate item as the phase
 * declares. What the core's loop does, minus storage, budget and retries.
 */
import type { ReadingDraft, ReplyView } from '../../../lib/battery/types.js';
import { assembleRows, type ReadItem } from '../../../lib/batteries/ptrue/analysis/assembleRows.js';
import type { PtrueRow } from '../../../lib/batteries/ptrue/analysis/types.js';
import { expandGenerate, expandJudge, expandVerify, type ExpandContext } from '../../../lib/batteries/ptrue/expand.js';
import { JUDGE_SETTINGS, ptruePhases } from '../../../lib/batteries/ptrue/phases.js';
import type { GenerationSettings } from '../../../lib/core/types.js';
import type { PtruePlan } from '../../../lib/batteries/ptrue/plan.js';
import { readGenerate, readJudge, readVerify } from '../../../lib/batteries/ptrue/read/readers.js';
import type { PtrueSimulation } from '../../../lib/batteries/ptrue/simulate/config.js';
import { SimulatedPtrueJudge, SimulatedPtrueRespondent, type PtrueJudgeSimulation } from '../../../lib/batteries/ptrue/simulate/index.js';
import type { PtrueItem } from '../../../lib/batteries/ptrue/types.js';

export interface SimulatedRunInput {
  readonly plan: PtruePlan;
  readonly seed: number;
  readonly models: Readonly<Record<string, PtrueSimulation>>;
  readonly judge?: PtrueJudgeSimulation;
}

const view = (text: string, logprobs: ReplyView['logprobs'] = null): ReplyView => ({ text, attempt: 1, logprobs });

export function runSimulated(input: SimulatedRunInput): PtrueRow[] {
  const { plan, seed } = input;
  const judge = input.judge ? new SimulatedPtrueJudge(seed, 'judge', input.judge) : null;
  const phaseSettings = Object.fromEntries(ptruePhases(plan).map((p) => [p.name, p.settings ?? {}])) as Record<'generate' | 'verify', GenerationSettings>;
  const rows: PtrueRow[] = [];
  for (const [model, cfg] of Object.entries(input.models)) {
    const respondent = new SimulatedPtrueRespondent({ seed, modelId: model, config: cfg });
    for (const q of plan.languages) {
      // The settings of each phase as the core sends them (the phases' own layer; no campaign defaults).
      const ctx: ExpandContext = { campaign: plan.campaign, subject: model, answerer: { id: model, settings: phaseSettings.generate }, language: q };
      const generate = expandGenerate(plan, ctx);
      const replies = new Map<string, ReplyView>();
      const readings = new Map<string, ReadingDraft[]>();
      for (const g of generate) {
        const reply = view(respondent.reply(g, { messages: g.messages, settings: g.settings, item: g }).text);
        replies.set(g.item_id, reply);
        readings.set(g.item_id, readGenerate(plan.identify, g, reply));
      }
      if (judge) {
        const jctx = { ...ctx, answerer: { id: 'judge', settings: JUDGE_SETTINGS } };
        for (const j of expandJudge(plan, jctx, generate, (id) => replies.get(id))) {
          const out = judge.reply(j);
          readings.get(j.source_item_id!)!.push(readJudge(j.model, out.text));
        }
      }
      const vctx = { ...ctx, answerer: { id: model, settings: phaseSettings.verify } };
      const verify: ReadItem[] = expandVerify(plan, vctx, generate, (id) => replies.get(id)).map((v) => {
        const out = respondent.reply(v, { messages: v.messages, settings: v.settings, item: v });
        return { item: v, readings: readVerify(v, view(out.text, out.logprobs ?? null)) };
      });
      rows.push(...assembleRows(model, generate.map((g: PtrueItem) => ({ item: g, readings: readings.get(g.item_id)! })), verify));
    }
  }
  return rows;
}
