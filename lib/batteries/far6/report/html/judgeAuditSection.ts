/**
 * The judge audit in report.html (Same Judgment, Different Yes "Sentence judging", Table 7): agreement of a second
 * judge and of the same judge again with the primary judge on a stratified sample, with Wilson
 * intervals, Cohen's kappa and the replies read on opposite decisive sides.
 */
import { domainOf, escapeHtml as esc, fmtNumber as fmt, matrixChart, rowChart, slug, tableDetails } from '../../../../api/battery.js';
import type { ChartRow } from '../../../../api/battery.js';
import type { JudgeAuditResults, JudgeAuditRow } from '../../analysis/types.js';
import { pct, section } from './section.js';
import type { Section } from './section.js';

const GROUP_LABEL: Readonly<Record<string, string>> = { all: 'pooled', constraint: 'by answer constraint', model: 'by model', language: 'by language' };

function keyOf(r: JudgeAuditRow): string {
  return r.level === 'all' ? 'all replies' : r.level === 'model' ? r.model : r.level === 'language' ? r.language : r.level === 'constraint' ? r.constraint : `${r.model}/${r.language}/${r.constraint}`;
}

/** The "Judge audit" section; call it only where the results carry an audit. */
export function judgeAuditSection(audit: JudgeAuditResults): Section {
  const id = 'judge-audit';
  const title = 'Judge audit';
  const parts: string[] = [
    `<p>${esc(
      'Same Judgment, Different Yes "Sentence judging", Table 7: a seeded sample of judged replies, stratified by model × language × answer constraint, read again by a second judge and by the same judge (test–retest). Dot: agreement with the primary judge over the four codebook categories, whisker: its 95 % Wilson interval, ring: Cohen\'s kappa; the labels give the replies compared and those read on opposite decisive sides (P against notP).',
    )}</p>`,
  ];
  const rows = audit.rows;
  if (rows.length === 0) {
    parts.push(`<p class="empty">${esc('No audit reading was paired with a primary judge reading.')}</p>`);
    return section(id, title, parts);
  }
  const comparisons = [...new Map(rows.map((r) => [`${r.comparison}\u0000${r.primary_reader}\u0000${r.audit_reader}`, r])).values()];
  for (const c of comparisons) {
    const mine = rows.filter((r) => r.comparison === c.comparison && r.primary_reader === c.primary_reader && r.audit_reader === c.audit_reader);
    const cs = slug(`${c.comparison}-${c.audit_reader}`);
    parts.push(`<h3>${esc(`${c.comparison}: ${c.audit_reader} against ${c.primary_reader}`)}</h3>`);
    const pooled = mine.filter((r) => r.level !== 'stratum' && r.agreement !== null);
    const chartRows: ChartRow[] = pooled.map((r) => ({
      label: `${keyOf(r)} (n ${r.n}, opposite ${r.n_opposite})`,
      group: GROUP_LABEL[r.level] ?? r.level,
      marks: [
        { x: r.agreement as number, series: 0, shape: 'dot', title: `agreement ${pct(r.agreement)} [${pct(r.agreement_low)}, ${pct(r.agreement_high)}] of ${r.n}` },
        ...(r.kappa !== null ? [{ x: r.kappa, series: 1, shape: 'ring' as const, title: `kappa ${fmt(r.kappa, 3)}` }] : []),
      ],
      ranges: r.agreement_low !== null && r.agreement_high !== null ? [{ lo: r.agreement_low, hi: r.agreement_high, series: 0 }] : [],
      emphasis: r.n_opposite > 0,
    }));
    if (chartRows.length) {
      const values = pooled.flatMap((r) => [r.agreement, r.agreement_low, r.agreement_high, r.kappa]);
      parts.push(
        `<figure>${rowChart({
          id: `chart-audit-${cs}`,
          title: `${c.comparison}: agreement and kappa with the primary judge, pooled and by constraint, model and language`,
          desc: `${chartRows.length} groups; rows in red have replies read on opposite decisive sides.`,
          rows: chartRows,
          domain: domainOf(values, [0, 1], [-1, 1]),
          axisLabel: 'agreement (dot) and Cohen\'s kappa (ring)',
          series: [{ label: 'agreement', shape: 'dot' }, { label: 'kappa', shape: 'ring' }],
        })}<figcaption>${esc('Rows with opposite decisive readings in red (Same Judgment, Different Yes "Sentence judging", Table 7).')}</figcaption></figure>`,
      );
    }
    const strata = mine.filter((r) => r.level === 'stratum');
    if (strata.length) {
      const cells = [...new Set(strata.map((r) => `${r.model}/${r.language}`))].sort();
      const constraints = [...new Set(strata.map((r) => r.constraint))].sort();
      const at = new Map(strata.map((r) => [`${r.model}/${r.language}\u0000${r.constraint}`, r]));
      parts.push(
        `<figure>${matrixChart({
          id: `hm-audit-${cs}`,
          title: `${c.comparison}: agreement per stratum (model/language × answer constraint)`,
          desc: `${strata.length} strata.`,
          rowLabels: cells,
          colLabels: constraints,
          rowGroups: cells.map((x) => x.slice(0, x.lastIndexOf('/'))),
          scale: 'share',
          better: 'high',
          legendLabel: 'agreement',
          cell: (i, j) => {
            const r = at.get(`${cells[i]}\u0000${constraints[j]}`);
            return {
              value: r?.agreement ?? null,
              title: r ? `${cells[i]} ${constraints[j]}: agreement ${pct(r.agreement)} of ${r.n}, kappa ${fmt(r.kappa, 3)}${r.kappa_note ? ` (${r.kappa_note})` : ''}, opposite ${r.n_opposite}` : `${cells[i]} ${constraints[j]}: not sampled`,
            };
          },
        })}<figcaption>${esc('Per stratum (Same Judgment, Different Yes "Sentence judging", Table 7); every number is in the table below and in judge_audit.csv.')}</figcaption></figure>`,
      );
    }
    parts.push(
      tableDetails({
        caption: `${c.comparison}: ${c.audit_reader} against ${c.primary_reader} (judge_audit.csv)`,
        csv: 'judge_audit.csv',
        header: ['level', 'model', 'language', 'constraint', 'sampled', 'unlabelled', 'compared', 'agree', 'agreement', '95 % low', '95 % high', 'kappa', 'kappa note', 'primary decisive', 'both decisive', 'opposite decisive'],
        rows: mine.map((r) => [
          r.level, r.model, r.language, r.constraint, String(r.n_sampled), String(r.n_unlabeled), String(r.n), String(r.n_agree),
          fmt(r.agreement, 3), fmt(r.agreement_low, 3), fmt(r.agreement_high, 3), fmt(r.kappa, 3), r.kappa_note,
          String(r.n_primary_decisive), String(r.n_both_decisive), String(r.n_opposite),
        ]),
      }),
    );
  }
  return section(id, title, parts);
}
