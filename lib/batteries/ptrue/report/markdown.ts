/**
 * summary.md: the headline tables of Disentangling Question, Response, and Verifier Languages (Table 2 overview, Table 4 regimes, Figure 2 axis
 * spans, §6.3 shares, App. E rank changes), labelled simulated when the rows are.
 */
import { fmtNumber, mdTable, readoutWarning, spendMarkdown } from '../../../api/battery.js';
import type { ReportMeta } from '../../../api/battery.js';
import type { PtrueResults } from '../analysis/analyzeRows.js';
import { cellMeans } from '../analysis/cells.js';

const f = (x: number | null | undefined, d = 3): string => fmtNumber(x ?? null, d);

export function summaryMarkdown(r: PtrueResults, meta: ReportMeta): string {
  const out: string[] = [];
  out.push(`# P(True): question, response and verifier languages — ${meta.campaign}`);
  if (r.simulated) out.push('', '> **SIMULATED** — every reply comes from simulated models; the numbers test the pipeline, not any model.');
  if (meta.source) out.push('', `Source: \`${meta.source}\``);
  for (const line of spendMarkdown(meta.spend)) out.push('', line);
  out.push('', `${r.models.length} model(s), ${r.benchmarks.length} benchmark(s), ${r.rows} item rows (model × base item × q × r × v).`);
  const unread = readoutWarning(r.readout);
  if (unread !== undefined) out.push('', `> **${unread}**`);

  out.push('', '## Overview (means over configuration cells; Disentangling Question, Response, and Verifier Languages Table 2)', '');
  out.push(
    mdTable(
      ['benchmark', 'cells', 'accuracy', 'Brier', 'ECE (15 bins)', 'AUROC', 'AUROC cells'],
      r.benchmarks.map((b) => {
        const m = cellMeans(r.cells.filter((c) => c.benchmark === b));
        return [b, String(m.cells), f(m.accuracy), f(m.brier), f(m.ece), f(m.auroc), String(m.aurocCells)];
      }),
    ),
  );
  out.push('', 'Per model:', '');
  out.push(
    mdTable(
      ['benchmark', 'model', 'cells', 'accuracy', 'Brier', 'ECE (15 bins)', 'AUROC', 'AUROC cells'],
      r.benchmarks.flatMap((b) =>
        r.models
          .map((model) => ({ model, m: cellMeans(r.cells.filter((c) => c.benchmark === b && c.model === model)) }))
          .filter(({ m }) => m.cells > 0)
          .map(({ model, m }) => [b, model, String(m.cells), f(m.accuracy), f(m.brier), f(m.ece), f(m.auroc), String(m.aurocCells)]),
      ),
    ),
  );

  out.push('', '## Matching regimes (Table 4, App. C: pooled and cell-level means)', '');
  out.push(
    mdTable(
      ['benchmark', 'regime', 'rows', 'accuracy', 'ECE pooled', 'ECE cells', 'AUROC pooled', 'AUROC cells'],
      r.regimes.map((g) => [g.benchmark, g.regime, String(g.pooled.n), f(g.pooled.accuracy), f(g.pooled.ece), f(g.cellMean.ece), f(g.pooled.auroc), f(g.cellMean.auroc)]),
    ),
  );

  out.push('', '## How far each language axis moves each metric (Figure 2: max − min of level means)', '');
  out.push(
    mdTable(
      ['benchmark', 'axis', 'metric', 'span', 'lowest', 'highest'],
      r.spans.map((s) => [s.benchmark, s.axis, s.metric, f(s.span), s.lowest ?? '–', s.highest ?? '–']),
    ),
  );

  out.push('', '## Explained-variance shares (§5, §6.3; averaged across models, provisional descriptions)', '');
  out.push(
    mdTable(
      ['benchmark', 'outcome', 'term', 'share', 'models'],
      [...r.accuracyShares, ...r.configurationShares].flatMap((d) => d.mean.map((t) => [d.benchmark, d.outcome, t.term, f(t.share), String(t.n)])),
    ),
  );

  out.push('', '## Matching effects (§5; REML, random intercept per model; Wald 95 %)', '');
  out.push(
    mdTable(
      ['benchmark', 'metric', 'term', 'estimate', '95 % interval', 'model-level mean', 'models same sign'],
      r.matching.flatMap((m) =>
        (m.mixed?.coefficients ?? [])
          .filter((c) => c.name !== '(intercept)')
          .map((c) => {
            const ml = m.modelLevel.find((x) => x.name === c.name);
            return [m.benchmark, m.metric, c.name, f(c.estimate), `[${f(c.lo)}, ${f(c.hi)}]`, f(ml?.mean), ml ? `${ml.sameSign}/${ml.models}` : '–'];
          }),
      ),
    ),
  );

  out.push('', '## Model rank changes along the language path (App. E; Kendall τ-b)', '');
  out.push(
    mdTable(
      ['benchmark', 'metric', 'from', 'to', 'τ-b', 'reversed pairs', 'of significant'],
      r.rankChanges.map((c) => [c.benchmark, c.metric, c.from, c.to, f(c.tau, 2), `${c.reversed}/${c.pairs}`, c.significantPairs === null ? '–' : `${c.significantReversed}/${c.significantPairs}`]),
    ),
  );
  out.push(
    '',
    mdTable(
      ['benchmark', 'metric', 'single-config median τ', 'all-English bootstrap mean τ', 'bootstrap 95 %'],
      r.rankReferences.map((x) => [x.benchmark, x.metric, f(x.singleConfigMedianTau, 2), f(x.bootstrap.mean, 2), `[${f(x.bootstrap.lo, 2)}, ${f(x.bootstrap.hi, 2)}]`]),
    ),
  );

  if (r.compliance.length > 0) {
    out.push('', '## Replies in the requested language (§6.6, App. C)', '');
    out.push(mdTable(['benchmark', 'requested', 'replies', 'in that language'], r.compliance.map((c) => [c.benchmark, c.r, String(c.replies), f(c.share)])));
  }
  if (r.scorers.length > 0) {
    out.push('', '## Exact option match against the judge (§6.2)', '');
    out.push(mdTable(['benchmark', 'q', 'replies', 'exact match', 'judge'], r.scorers.map((s) => [s.benchmark, s.q, String(s.replies), f(s.primary), f(s.alternative)])));
  }
  out.push('', 'Conventions: ECE uses 15 equal-width bins ((m−1)/15, m/15], 0 in the first (Guo et al. 2017); AUROC counts ties one half and is undefined (–) for an all-correct or all-incorrect cell; cell-level means weigh every configuration cell the same.');
  return `${out.join('\n')}\n`;
}

/** A short table for the terminal. */
export function consoleSummary(r: PtrueResults): string {
  const lines = [`P(True)${r.simulated ? ' [SIMULATED]' : ''}: ${r.models.length} models, ${r.rows} rows`];
  const unread = readoutWarning(r.readout);
  if (unread !== undefined) lines.push(unread);
  for (const b of r.benchmarks) {
    const m = cellMeans(r.cells.filter((c) => c.benchmark === b));
    lines.push(`  ${b.padEnd(16)} accuracy ${f(m.accuracy)}  Brier ${f(m.brier)}  ECE ${f(m.ece)}  AUROC ${f(m.auroc)}`);
  }
  return lines.join('\n');
}
