/**
 * Analysis results for the report.html tests, built by the real estimators from item rows drawn
 * with a seeded stream: every model has its own story profile, the negative-interrogative token
 * flips for some models (a truth/agreement mapping), labels carry a second-listed preference.
 */
import { agreementAnalysis } from '../../../../lib/batteries/far6/analysis/agreement.js';
import { estimate } from '../../../../lib/batteries/far6/analysis/estimators.js';
import { habitAnalysis } from '../../../../lib/batteries/far6/analysis/habits.js';
import { identityAnalysis } from '../../../../lib/batteries/far6/analysis/identity.js';
import { judgeAuditAnalysis } from '../../../../lib/batteries/far6/analysis/judgeAudit.js';
import { residualReadoutComparisons } from '../../../../lib/batteries/far6/analysis/readoutResiduals.js';
import type { AnalysisResults, ItemShareRow, JudgeAuditPairRow, ReadingAgreementRow, ReplyTotalsRow } from '../../../../lib/batteries/far6/analysis/types.js';
import type { AnswerConstraint, QuestionForm } from '../../../../lib/batteries/far6/types.js';
import { seededRandom } from '../../../../lib/core/hash.js';

export interface FixtureOptions {
  readonly models?: readonly string[];
  readonly languages?: readonly string[];
  readonly stories?: number;
  /** Leave out the cross-cell analyses (identity, habits, agreement, residuals), as a bare estimate. */
  readonly bare?: boolean;
  /** Add a judge audit (second judge on 12 replies per model × language × constraint). */
  readonly audit?: boolean;
}

const READOUTS: readonly [QuestionForm, AnswerConstraint, string][] = [
  ['plain', 'label', 'rule'],
  ['plain', 'free', 'judge:j'],
  ['plain', 'yesno', 'rule'],
  ['plain', 'yesno', 'judge:j'],
  ['negint', 'yesno', 'rule'],
  ['negint', 'yesno', 'judge:j'],
];

function binomial(rnd: () => number, n: number, p: number): number {
  let k = 0;
  for (let i = 0; i < n; i++) if (rnd() < p) k += 1;
  return k;
}

/** Results of a small design: models × languages × stories, six readouts, N = 10 replies per item. */
export function fixtureResults(opts: FixtureOptions = {}): AnalysisResults {
  const models = opts.models ?? ['alpha', 'beta', 'gamma'];
  const languages = opts.languages ?? ['de', 'en'];
  const nStories = opts.stories ?? 12;
  const rnd = seededRandom(17);
  const N = 10;
  const rows: ItemShareRow[] = [];
  const agreementRows: ReadingAgreementRow[] = [];
  const totals: ReplyTotalsRow[] = [];
  models.forEach((model, mi) => {
    const profile = Array.from({ length: nStories }, (_, j) => Math.min(0.95, Math.max(0.05, j / nStories + (rnd() - 0.5) * 0.3 * (mi + 1))));
    for (const language of languages) {
      for (let j = 0; j < nStories; j++) {
        const story = `s${j}`;
        const group = j < nStories / 3 ? 'acceptable' : j < (2 * nStories) / 3 ? 'contested' : 'violation';
        const pi = Math.min(0.98, Math.max(0.02, (profile[j] as number) + (rnd() - 0.5) * 0.1));
        for (const [form, constraint, reader] of READOUTS) {
          for (const named of ['P', 'notP'] as const) {
            for (const order of constraint === 'label' ? [0, 1] : [0]) {
              // Keying bias: a pull towards "no" on the token; the negint token flips (truth/agreement) for all models but the first.
              let q = pi;
              if (constraint === 'yesno' && reader === 'rule') q += named === 'P' ? -0.08 : 0.08;
              if (form === 'negint' && reader === 'rule' && mi > 0) q = 1 - q;
              if (constraint === 'label') q += order === 0 ? 0.04 : -0.04;
              q = Math.min(1, Math.max(0, q));
              const nP = binomial(rnd, N, q);
              rows.push({
                model, language, reader, form, constraint, story, story_group: group, concept_pair: `${language}.wrong-right`,
                construction: 'evaluative_adjective', named, option_order: order,
                n_replies: N, n_p: nP, n_notp: N - nP, n_both: 0, n_none: 0, n_invalid: 0,
                second_listed: constraint === 'label' ? (order === 0 ? 'notP' : 'P') : null,
              });
            }
          }
        }
      }
      for (const form of ['plain', 'negint'] as const) {
        for (const named of ['P', 'notP'] as const) {
          const n = 40;
          const agreeRate = form === 'plain' ? 0.96 : mi > 0 ? 0.2 : 0.8;
          agreementRows.push({
            model, language, form, constraint: 'yesno', concept_pair: `${language}.wrong-right`, construction: 'evaluative_adjective',
            named, reader_a: 'judge:j', reader_b: 'rule', n_both_decisive: n, n_agree: binomial(rnd, n, agreeRate),
          });
        }
      }
      totals.push({ model, language, attempts: 300 + ((mi * 7 + language.length * 3 + language.charCodeAt(0)) % 11), ok_attempts: 290, items_ok: 280, simulated_attempts: 300, cost_usd: 0.125 });
    }
  });
  const est = estimate(rows, { minCommonStories: 8 });
  const base: AnalysisResults = {
    ...est,
    cellSummary: [],
    replyTotals: totals,
    itemRows: rows.length,
    simulated: true,
  };
  if (opts.bare) return base;
  const audit: JudgeAuditPairRow[] = [];
  if (opts.audit) {
    const labels = ['P', 'notP', 'both', 'none'] as const;
    for (const model of models) {
      for (const language of languages) {
        for (const constraint of ['free', 'yesno'] as const) {
          for (let i = 0; i < 12; i++) {
            const primary = labels[Math.floor(rnd() * 4)] as string;
            const audit_label = rnd() < 0.85 ? primary : primary === 'P' ? 'notP' : (labels[Math.floor(rnd() * 4)] as string);
            audit.push({ model, language, phase: 'audit-second', item_id: `${model}-${language}-${constraint}-${i}`, constraint, form: 'plain', audit_reader: 'judge:second', audit_label, primary_reader: 'judge:j', primary_label: primary });
          }
        }
      }
    }
  }
  const residual = residualReadoutComparisons(est.storyScores, est.comparisons, est.minCommonStories);
  return {
    ...base,
    identity: identityAnalysis(est.storyScores, { bootstrapDraws: 20, byStoryGroup: false, minCommonStories: est.minCommonStories }),
    habits: habitAnalysis(est.cellHabits),
    agreement: agreementAnalysis(agreementRows),
    residualComparisons: residual.cells,
    residualConvergence: residual.convergence,
    ...(opts.audit ? { judgeAudit: judgeAuditAnalysis(audit) } : {}),
  };
}
