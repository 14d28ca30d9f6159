/**
 * Reliability diagrams per setting (Disentangling Question, Response, and Verifier Languages §5–6): per benchmark and step of the language path
 * (ranks.ts PATH_STEPS: all-English, question localised, question and response, all localised),
 * the 15 confidence bins of the pooled rows of that setting over models and target languages.
 */
import { reliabilityBins } from '../../../api/battery.js';
import type { ReliabilityBin } from '../../../api/battery.js';
import { PATH_STEPS, stepCondition } from './ranks.js';
import type { PtrueRow } from './types.js';

export interface ReliabilityDiagram {
  readonly benchmark: string;
  readonly setting: string;
  readonly n: number;
  readonly bins: readonly ReliabilityBin[];
}

/** One diagram per benchmark × path step. */
export function reliabilityDiagrams(rows: readonly PtrueRow[], english = 'en'): ReliabilityDiagram[] {
  const out: ReliabilityDiagram[] = [];
  const benchmarks = [...new Set(rows.map((r) => r.benchmark))].sort();
  for (const benchmark of benchmarks) {
    const mine = rows.filter((r) => r.benchmark === benchmark && r.p_true !== null);
    const targets = [...new Set(mine.map((r) => r.q))].filter((l) => l !== english);
    PATH_STEPS.forEach((setting, step) => {
      const conditions = new Set((step === 0 ? [english] : targets).map((t) => stepCondition(step, t, english)).map((c) => `${c.q}|${c.r}|${c.v}`));
      const pairs = mine.filter((r) => conditions.has(`${r.q}|${r.r}|${r.v}`)).map((r) => ({ p: r.p_true as number, y: r.correct }));
      out.push({ benchmark, setting, n: pairs.length, bins: reliabilityBins(pairs) });
    });
  }
  return out;
}
