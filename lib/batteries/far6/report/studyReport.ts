/**
 * Result files and summary sections of the cross-cell analyses (Same Judgment, Different Yes §5 Table 6 and Figure 3a,
 * §6): profile pairs, nearest neighbours, identity counts, class means, habit variance and sign
 * changes under negation. report.ts writes them beside the per-cell results.
 */
import { fmtNumber as fmt, mdTable, toCsv } from '../../../api/battery.js';
import type {
  AnalysisResults,
  ClassEstimate,
  HabitModelMean,
  IdentityModel,
  ReadoutComparison,
  ReadoutConvergence,
  DisagreementSummary,
  PolarityShare,
  ReplyDisagreement,
  ResidualConvergence,
  ResidualReadoutComparison,
  HabitVariance,
  IdentityCount,
  JudgeAuditRow,
  NearestNeighbour,
  ProfilePair,
  SignChange,
} from '../analysis/types.js';

export const STUDY_FILES = [
  'same_replies_comparisons.csv',
  'same_replies_convergence.csv',
  'readout_residual_comparisons.csv',
  'readout_residual_convergence.csv',
  'profile_pairs.csv',
  'identity.csv',
  'identity_counts.csv',
  'identity_classes.csv',
  'identity_models.csv',
  'habits_variance.csv',
  'habits_model_means.csv',
  'habits_sign_changes.csv',
  'reply_disagreement.csv',
  'reply_disagreement_summary.csv',
  'polarity_shares.csv',
  'judge_audit.csv',
] as const;

const PAIR_COLUMNS: (keyof ProfilePair & string)[] = ['readout', 'model_a', 'language_a', 'model_b', 'language_b', 'class', 'n_common', 'r', 'n_common_residual', 'residual_r', 'mean_abs_diff'];
const NEIGHBOUR_COLUMNS: (keyof NearestNeighbour & string)[] = ['readout', 'metric', 'model', 'language', 'n_candidates', 'value', 'neighbours', 'n_tied', 'same_model', 'chance'];
const COUNT_COLUMNS: (keyof IdentityCount & string)[] = ['readout', 'metric', 'n_cells', 'same_model', 'expected_random', 'n_ties'];
const CLASS_COLUMNS: (keyof ClassEstimate & string)[] = ['readout', 'story_group', 'metric', 'contrast', 'n_pairs', 'estimate', 'ci_low', 'ci_high', 'n_draws'];
const IDENTITY_MODEL_COLUMNS: (keyof IdentityModel & string)[] = ['readout', 'metric', 'model', 'n_cells', 'same_model_nearest', 'n_pairs', 'mean', 'min', 'max'];
const MODEL_MEAN_COLUMNS: (keyof HabitModelMean & string)[] = ['readout', 'habit', 'model', 'n_languages', 'mean', 'min', 'max'];
const VARIANCE_COLUMNS: (keyof HabitVariance & string)[] = ['readout', 'habit', 'n_models', 'n_languages', 'dropped', 'grand_mean', 'model_share', 'language_share', 'interaction_share'];
const SAME_COMPARISON_COLUMNS: (keyof ReadoutComparison & string)[] = ['model', 'language', 'readout_a', 'readout_b', 'n_common', 'r', 'mean_abs_diff'];
const SAME_CONVERGENCE_COLUMNS: (keyof ReadoutConvergence & string)[] = ['readout_a', 'readout_b', 'n_cells', 'median_r', 'q10_r', 'q90_r', 'median_abs_diff'];
const RESIDUAL_COMPARISON_COLUMNS: (keyof ResidualReadoutComparison & string)[] = ['model', 'language', 'readout_a', 'readout_b', 'n_common', 'residual_r'];
const RESIDUAL_CONVERGENCE_COLUMNS: (keyof ResidualConvergence & string)[] = ['readout_a', 'readout_b', 'n_cells', 'median_residual_r', 'q10_residual_r', 'q90_residual_r'];
const DISAGREEMENT_COLUMNS: (keyof ReplyDisagreement & string)[] = ['form', 'constraint', 'reader_a', 'reader_b', 'model', 'language', 'n_both_decisive', 'n_disagree', 'disagreement'];
const DISAGREEMENT_SUMMARY_COLUMNS: (keyof DisagreementSummary & string)[] = ['form', 'constraint', 'reader_a', 'reader_b', 'n_cells', 'n_both_decisive', 'mean_disagreement', 'min_disagreement', 'max_disagreement'];
const POLARITY_COLUMNS: (keyof PolarityShare & string)[] = ['level', 'judge', 'model', 'language', 'construction', 'wording', 'n_replies', 'n_polarity', 'share', 'model_mean'];
const AUDIT_COLUMNS: (keyof JudgeAuditRow & string)[] = [
  'comparison', 'primary_reader', 'audit_reader', 'level', 'model', 'language', 'constraint', 'n_sampled', 'n_unlabeled', 'n', 'n_agree',
  'agreement', 'agreement_low', 'agreement_high', 'kappa', 'kappa_note', 'n_primary_decisive', 'n_both_decisive', 'n_opposite',
];
const SIGN_COLUMNS: (keyof SignChange & string)[] = ['readout_a', 'readout_b', 'model', 'language', 'b_a', 'b_b', 'changed'];

/** The CSV files of the cross-cell analyses; header-only where they were not computed. */
export function studyCsvFiles(results: AnalysisResults): [name: (typeof STUDY_FILES)[number], content: string][] {
  const id = results.identity;
  const hb = results.habits;
  return [
    ['same_replies_comparisons.csv', toCsv(SAME_COMPARISON_COLUMNS, results.sameReplies?.comparisons ?? [])],
    ['same_replies_convergence.csv', toCsv(SAME_CONVERGENCE_COLUMNS, results.sameReplies?.convergence ?? [])],
    ['readout_residual_comparisons.csv', toCsv(RESIDUAL_COMPARISON_COLUMNS, results.residualComparisons ?? [])],
    ['readout_residual_convergence.csv', toCsv(RESIDUAL_CONVERGENCE_COLUMNS, results.residualConvergence ?? [])],
    ['profile_pairs.csv', toCsv(PAIR_COLUMNS, id?.pairs ?? [])],
    ['identity.csv', toCsv(NEIGHBOUR_COLUMNS, id?.neighbours ?? [])],
    ['identity_counts.csv', toCsv(COUNT_COLUMNS, id?.counts ?? [])],
    ['identity_classes.csv', toCsv(CLASS_COLUMNS, id?.classes ?? [])],
    ['identity_models.csv', toCsv(IDENTITY_MODEL_COLUMNS, id?.models ?? [])],
    ['habits_variance.csv', toCsv(VARIANCE_COLUMNS, hb?.variance ?? [])],
    ['habits_model_means.csv', toCsv(MODEL_MEAN_COLUMNS, hb?.modelMeans ?? [])],
    ['habits_sign_changes.csv', toCsv(SIGN_COLUMNS, hb?.signChanges ?? [])],
    ['reply_disagreement.csv', toCsv(DISAGREEMENT_COLUMNS, results.agreement?.disagreement ?? [])],
    ['reply_disagreement_summary.csv', toCsv(DISAGREEMENT_SUMMARY_COLUMNS, results.agreement?.disagreementSummary ?? [])],
    ['polarity_shares.csv', toCsv(POLARITY_COLUMNS, results.agreement?.polarity ?? [])],
    ['judge_audit.csv', toCsv(AUDIT_COLUMNS, results.judgeAudit?.rows ?? [])],
  ];
}

const METRIC_LABEL: Readonly<Record<string, string>> = { residual_r: 'residual r', story_r: 'story-level r', mean_abs_diff: 'mean |Δ|' };

function interval(row: ClassEstimate | undefined, digits = 2): string {
  if (!row || row.estimate === null) return '–';
  return `${fmt(row.estimate, digits)} [${fmt(row.ci_low, digits)}, ${fmt(row.ci_high, digits)}]`;
}

/** summary.md sections for model identity (Same Judgment, Different Yes §5) and habit variance (Same Judgment, Different Yes §6). */
export function studySummarySections(results: AnalysisResults): string[] {
  const parts: string[] = [];
  if (results.sameReplies) {
    const same = results.sameReplies.convergence.filter((c) => c.n_cells > 0);
    parts.push(
      '## The same replies, two readings',
      `Same Judgment, Different Yes §3–§4: story profiles of a rule and a judge built from exactly the replies both read decisively (identical weights), compared within each cell on ≥ ${results.minCommonStories} common stories; median over cells and 10–90 % range. A difference here lies in the reading, not in the replies.`,
      same.length
        ? mdTable(
            ['judge reading', 'rule reading', 'cells', 'median r', '10 %', '90 %', 'median mean |Δ|'],
            same.map((c) => [c.readout_a, c.readout_b, String(c.n_cells), fmt(c.median_r), fmt(c.q10_r), fmt(c.q90_r), fmt(c.median_abs_diff)]),
          )
        : '_No cell had enough stories read decisively by both a rule and a judge._',
    );
  }
  const residual = (results.residualConvergence ?? []).filter((c) => c.n_cells > 0);
  if (results.residualConvergence) {
    parts.push(
      '## Residual profiles across readouts',
      'Same Judgment, Different Yes §4: residual-profile r (each readout\'s language consensus over models and the cell mean removed) between two readouts of the same cell, over cells: whether agreement keeps how each model departs from its peers. Needs at least two models in a language.',
      residual.length
        ? mdTable(
            ['readout A', 'readout B', 'cells', 'median residual r', '10 %', '90 %'],
            residual.map((c) => [c.readout_a, c.readout_b, String(c.n_cells), fmt(c.median_residual_r), fmt(c.q10_residual_r), fmt(c.q90_residual_r)]),
          )
        : '_No readout pair had residual profiles on enough common stories in any cell._',
    );
  }
  const id = results.identity;
  if (id) {
    parts.push('## Model identity across languages');
    parts.push(
      `Same Judgment, Different Yes §5, Table 6. Each cell's nearest other cell under residual r (language consensus and cell mean removed), story-level r and mean |Δ|, on ≥ ${results.minCommonStories} common stories; ` +
        `the count of cells whose nearest neighbour is the same model in another language, beside a uniform-random neighbour (Σ same-model candidates / candidates). ` +
        `A tie credits the same-model share of the tied cells. Class means with 95 % story-bootstrap intervals (${id.draws} draws, seed ${id.seed}); differences on the same draws.`,
    );
    if (id.readouts.length === 0) parts.push('_No identity readout (plain/label/rule, plain/free/judge:*) has story scores._');
    for (const readout of id.readouts) {
      const counts = id.counts.filter((c) => c.readout === readout);
      parts.push(
        `### \`${readout}\``,
        mdTable(
          ['metric', 'same-model nearest', 'random benchmark', 'cells', 'ties'],
          counts.map((c) => [METRIC_LABEL[c.metric] ?? c.metric, fmt(c.same_model, Number.isInteger(c.same_model) ? 0 : 1), fmt(c.expected_random, 1), String(c.n_cells), String(c.n_ties)]),
        ),
      );
      const classes = id.classes.filter((c) => c.readout === readout);
      const groups = [...new Set(classes.map((c) => c.story_group))];
      const rows: string[][] = [];
      for (const group of groups) {
        for (const metric of ['residual_r', 'story_r', 'mean_abs_diff'] as const) {
          if (group !== 'all' && metric === 'residual_r') continue;
          const get = (contrast: string) => classes.find((c) => c.story_group === group && c.metric === metric && c.contrast === contrast);
          const values = [interval(get('same_model')), interval(get('same_language')), interval(get('both_differ')), interval(get('same_model-same_language'), 3)];
          // A story group with fewer common stories than the minimum has nothing to show.
          if (group !== 'all' && values.every((v) => v === '–')) continue;
          rows.push([group, METRIC_LABEL[metric] as string, ...values]);
        }
      }
      if (rows.length) parts.push(mdTable(['stories', 'metric', 'same model', 'same language', 'both differ', 'same model − same language'], rows));
    }
  }
  const hb = results.habits;
  if (hb) {
    parts.push('## Answer habits across cells');
    parts.push(
      'Same Judgment, Different Yes §6 (yes/no and label readouts here; every readout in habits_variance.csv). Share of the variance of the cell-mean matrix (models × languages) due to the model × language interaction (two-way decomposition without replication; cells outside a complete matrix are dropped and listed in habits_variance.csv), and the cells where b changes sign from the plain question to the negative interrogative.',
    );
    // The habits of Same Judgment, Different Yes §6 live on the token and the letter; every readout is in the CSV.
    const variance = hb.variance.filter((v) => v.interaction_share !== null && /^[^/]+\/(yesno|label)\//.test(v.readout));
    parts.push(
      variance.length
        ? mdTable(
            ['readout', 'habit', 'models × languages', 'mean', 'model', 'language', 'interaction'],
            variance.map((v) => [v.readout, v.habit, `${v.n_models} × ${v.n_languages}`, fmt(v.grand_mean, 3), fmt(v.model_share), fmt(v.language_share), fmt(v.interaction_share)]),
          )
        : '_No habit matrix of at least 2 models × 2 languages with variance._',
    );
    parts.push(
      hb.signChangeCounts.length
        ? mdTable(
            ['plain', 'negative interrogative', 'cells', 'sign changes', 'b exactly 0'],
            hb.signChangeCounts.map((c) => [c.readout_a, c.readout_b, String(c.n_cells), String(c.n_changed), String(c.n_zero)]),
          )
        : '_No cell has b under both the plain and the negative-interrogative yes/no question._',
    );
  }
  const ag = results.agreement;
  if (ag) {
    parts.push('## The same replies read twice');
    const rows = ag.disagreementSummary.filter((d) => d.n_cells > 0);
    parts.push(
      'Same Judgment, Different Yes Figure 2b: among replies that both readers read decisively, the share on which they disagree; mean over cells (each cell equally), with the lowest and highest cell.',
      rows.length
        ? mdTable(
            ['form', 'constraint', 'reader A', 'reader B', 'cells', 'replies', 'mean disagreement', 'min', 'max'],
            rows.map((d) => [d.form, d.constraint, d.reader_a, d.reader_b, String(d.n_cells), String(d.n_both_decisive), fmt(d.mean_disagreement, 3), fmt(d.min_disagreement, 3), fmt(d.max_disagreement, 3)]),
          )
        : '_No reply was read decisively by two readers._',
    );
    const models = ag.polarity.filter((p) => p.level === 'model');
    const constructions = ag.polarity.filter((p) => p.level === 'construction');
    parts.push(
      '## The negative-interrogative token',
      'Same Judgment, Different Yes §7: of the negative-interrogative yes/no replies with a decisive token and a decisive judged sentence, the share whose token follows the polarity mapping (yes with the named term); the rest follow the truth/agreement mapping. Per model pooled over languages, and per language and construction family (pooled, and the mean of the models). Cells and wordings: polarity_shares.csv.',
    );
    if (models.length === 0) {
      parts.push('_No negative-interrogative yes/no reply has both a decisive token and a decisive judged sentence._');
    } else {
      parts.push(mdTable(['judge', 'model', 'replies', 'polarity share'], models.map((p) => [p.judge, p.model, String(p.n_replies), fmt(p.share)])));
      parts.push(mdTable(['judge', 'language', 'construction', 'replies', 'polarity share', 'mean of models'], constructions.map((p) => [p.judge, p.language, p.construction, String(p.n_replies), fmt(p.share), fmt(p.model_mean)])));
    }
  }
  if (results.judgeAudit) parts.push(...judgeAuditSections(results.judgeAudit.rows));
  return parts;
}

/**
 * Same Judgment, Different Yes "Sentence judging", Table 7: the audit sample read again by a second judge and by the
 * same judge; pooled rows here, every stratum in judge_audit.csv.
 */
function judgeAuditSections(rows: readonly JudgeAuditRow[]): string[] {
  const parts = [
    '## Judge audit',
    'Same Judgment, Different Yes "Sentence judging": a seeded sample of judged replies, stratified by model × language × answer constraint, read again by a second judge model and by the same judge (test–retest). ' +
      'Agreement with the primary judge over the four codebook categories (95 % Wilson interval), Cohen\'s kappa, the replies the primary judge read decisively, and the replies the two readings put on opposite decisive sides (P against notP). ' +
      'Every stratum is in judge_audit.csv; kappa is empty where it is undefined (kappa_note says why).',
  ];
  const strata = rows.filter((r) => r.level === 'stratum');
  if (strata.length === 0) {
    parts.push('_No audit reading was paired with a primary judge reading._');
    return parts;
  }
  const pct = (x: number | null) => (x === null ? '–' : `${fmt(100 * x, 1)} %`);
  const agreement = (r: JudgeAuditRow) => (r.agreement === null ? '–' : `${pct(r.agreement)} [${fmt(100 * (r.agreement_low ?? 0), 1)}, ${fmt(100 * (r.agreement_high ?? 0), 1)}]`);
  const group = (r: JudgeAuditRow) =>
    r.level === 'all' ? 'all' : r.level === 'model' ? `model ${r.model}` : r.level === 'language' ? `language ${r.language}` : `constraint ${r.constraint}`;
  const pooled = rows.filter((r) => r.level !== 'stratum');
  parts.push(
    mdTable(
      ['comparison', 'primary', 'audit', 'group', 'replies', 'agreement [95 %]', 'kappa', 'primary decisive', 'opposite decisive'],
      pooled.map((r) => [r.comparison, r.primary_reader, r.audit_reader, group(r), String(r.n), agreement(r), fmt(r.kappa, 3), String(r.n_primary_decisive), String(r.n_opposite)]),
    ),
  );
  const undefinedKappa = strata.filter((r) => r.kappa === null).length;
  const unlabeled = pooled.filter((r) => r.level === 'all').reduce((s, r) => s + r.n_unlabeled, 0);
  parts.push(
    `${strata.length} strata (comparison × model × language × constraint); kappa undefined in ${undefinedKappa} of them. ` +
      `${unlabeled} audit reading(s) had no codebook label from both readings (an invalid label or a failed call) and are left out of the agreement.`,
  );
  return parts;
}

/** Lines for the file list of summary.md. */
export const STUDY_FILE_LINES: readonly string[] = [
  '- `same_replies_comparisons.csv`, `same_replies_convergence.csv`: rule and judge profiles of the same replies (both decisive), per cell and over cells',
  '- `readout_residual_comparisons.csv`, `readout_residual_convergence.csv`: residual-profile r between readouts per cell, and over cells',
  '- `profile_pairs.csv`: per identity readout and pair of cells, story-level r, residual r and mean |Δ| on common stories',
  '- `identity.csv`: nearest neighbour of each cell per metric, with ties and the random benchmark',
  '- `identity_counts.csv`: same-model nearest neighbours per readout and metric, beside the benchmark',
  '- `identity_classes.csv`: class means and differences with 95 % story-bootstrap intervals, all stories and by story group',
  '- `identity_models.csv`: per model, same-model nearest neighbours and the range of its language-pair values',
  '- `habits_variance.csv`: model, language and interaction shares of each habit matrix',
  '- `habits_model_means.csv`: each habit\'s mean, lowest and highest language per model and readout',
  '- `habits_sign_changes.csv`: b under the plain and the negative-interrogative question per cell',
  '- `reply_disagreement.csv`, `reply_disagreement_summary.csv`: reply-level disagreement of two readers per cell, and over cells',
  '- `polarity_shares.csv`: polarity share of the negative-interrogative token by model, language, cell, construction and wording',
  '- `judge_audit.csv`: judge audit per comparison (second judge, retest) and stratum: agreement with its interval, Cohen\'s kappa, decisive and opposite decisive counts',
];
