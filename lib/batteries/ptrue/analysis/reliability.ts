/**
 * Reliability diagrams per setting (Disentangling Question, Response, and Verifier Languages §5–6): per benchmark and step of the language path
 * (ranks.ts PATH_STEPS: all-English, question localised, question and response, all localised),
 * the 15 confidence bins of the pooled rows of that setting over models and target languages.
 */
import { reliabilityBins } from '../../../api/battery.js';
import type { ReliabilityBin } from '../../../api/battery.js';
import { PATH_STEPS } from './ranks.js';
import type { PtrueRow } from './types.js';

export interface ReliabilityDiagram {
  readonly benchmark: string;
  readonly setting: string;
  readonly n: number;
  readonly bins: readonly ReliabilityBin[];
}

/** One diagram per benchmark × path step. */
export function reliabilityDiagrams(rows: readonly PtrueRow[], english = 'en'): ReliabilityDiagram[] {
  // One pass over the rows, each scored row put in its benchmark's step, in row order (the order
  // the bins add up in): at the paper's size 6.2 M rows, where a filter per benchmark and step
  // with a key string per row made 25 M strings.
  const byBenchmark = new Map<string, { p: number; y: boolean }[][]>();
  for (const r of rows) {
    let steps = byBenchmark.get(r.benchmark);
    if (steps === undefined) byBenchmark.set(r.benchmark, (steps = PATH_STEPS.map(() => [])));
    const p = r.p_true;
    if (p === null) continue;
    const step = pathStep(r.q, r.r, r.v, english);
    if (step !== undefined) steps[step]!.push({ p, y: r.correct });
  }
  const out: ReliabilityDiagram[] = [];
  for (const benchmark of [...byBenchmark.keys()].sort()) {
    PATH_STEPS.forEach((setting, step) => {
      const pairs = byBenchmark.get(benchmark)![step]!;
      out.push({ benchmark, setting, n: pairs.length, bins: reliabilityBins(pairs) });
    });
  }
  return out;
}

/**
 * The step of the path whose condition (ranks.ts stepCondition) a row's languages are, for some
 * target language (its question language: every step past all-English localises the question
 * first), or undefined when they are none of them.
 */
function pathStep(q: string, r: string, v: string, english: string): number | undefined {
  if (q === english) return r === english && v === english ? 0 : undefined;
  const step = r === english ? 1 : r === q ? 2 : undefined;
  if (step === undefined) return undefined;
  if (v === english) return step;
  return step === 2 && v === q ? 3 : undefined;
}
