import { describe, expect, it } from 'vitest';
import { csvField, formatCsvValue, toCsv } from '../../../../lib/report/csv.js';
import { estimate } from '../../../../lib/batteries/far6/analysis/estimators.js';
import { formatConsoleTable, RESULT_FILES, writeResults } from '../../../../lib/batteries/far6/report/report.js';
import type { AnalysisResults, ItemShareRow } from '../../../../lib/batteries/far6/analysis/types.js';

/** A strict RFC 4180 reader, to check what the writer produces round-trips. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const ch = text[i] as string;
    const next = text[i + 1];
    if (quoted) {
      if (ch === '"' && next === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"' && field === '') {
      quoted = true;
    } else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\r' && next === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += 2;
      continue;
    } else if (ch === '"' || ch === '\r' || ch === '\n') {
      throw new Error(`bare ${JSON.stringify(ch)} at ${i}`);
    } else {
      field += ch;
    }
    i++;
  }
  if (field !== '' || row.length > 0) throw new Error('last record lacks CRLF');
  return rows;
}

describe('CSV (RFC 4180)', () => {
  it.each([
    ['plain/yesno/rule', 'plain/yesno/rule'],
    ['a,b', '"a,b"'],
    ['say "no"', '"say ""no"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\r', '"cr\r"'],
    [' padded ', ' padded '],
    [null, ''],
  ])('writes %j as %j: quoted where it holds a comma, a quote or a line break, and only there', (value, field) => {
    expect(csvField(value)).toBe(field);
  });

  it.each([
    [0.1234567, '0.123457'],
    [-0.0000001, '0'],
    [42, '42'],
    [Number.NaN, ''],
  ])('writes the number %d as %j: six decimals at most, no negative zero', (value, field) => {
    expect(formatCsvValue(value)).toBe(field);
  });

  it('round-trips awkward values through a strict reader', () => {
    const rows = [
      { story: 'Finn, "the" baker', note: 'a\r\nb', n: 1 },
      { story: '', note: '"', n: null },
    ];
    const text = toCsv(['story', 'note', 'n'], rows);
    expect(text.endsWith('\r\n')).toBe(true);
    expect(parseCsv(text)).toEqual([
      ['story', 'note', 'n'],
      ['Finn, "the" baker', 'a\r\nb', '1'],
      ['', '"', ''],
    ]);
  });
});

function results(simulated: boolean): AnalysisResults {
  const rows: ItemShareRow[] = [];
  // Ten stories, two readouts with known profiles; one story name needs quoting.
  for (let j = 0; j < 10; j++) {
    for (const reader of ['rule', 'judge:j']) {
      for (const named of ['P', 'notP'] as const) {
        const p = reader === 'rule' ? (named === 'P' ? j : j - 1) : j;
        rows.push({
          model: 'alpha', language: 'en', reader, form: 'plain', constraint: 'yesno', story: j === 0 ? 'Finn, the "baker"' : `s${j}`,
          story_group: 'contested', concept_pair: 'wr', construction: 'adj', named, option_order: 0,
          n_replies: 10, n_p: Math.max(0, p), n_notp: 10 - Math.max(0, p), n_both: 0, n_none: 0, n_invalid: 0, second_listed: null,
        });
      }
    }
  }
  const est = estimate(rows);
  return {
    ...est,
    cellSummary: [{ model: 'alpha', language: 'en', form: 'plain', constraint: 'yesno', reader: 'rule', replies: 200, decisive: 200, n_p: 80, decisive_share: 1, p_share: 0.4 }],
    replyTotals: [{ model: 'alpha', language: 'en', attempts: 210, ok_attempts: 200, items_ok: 200, simulated_attempts: simulated ? 210 : 0, cost_usd: 1.25 }],
    itemRows: rows.length,
    simulated,
  };
}

describe('writeResults', () => {
  it('writes every result file, with quoted story names', async () => {
    const files = new Map<string, string>();
    await writeResults(async (name, content) => void files.set(name, content), results(true), { campaign: 'demo' });
    expect([...files.keys()].sort()).toEqual([...RESULT_FILES].sort());
    const stories = parseCsv(files.get('story_scores.csv') ?? '');
    expect(stories[0]).toEqual(['model', 'language', 'readout', 'story', 'story_group', 's', 'b', 'n_pairs']);
    expect(stories.some((r) => r[3] === 'Finn, the "baker"')).toBe(true);
    const comparisons = parseCsv(files.get('readout_comparisons.csv') ?? '');
    expect(comparisons[0]).toEqual(['model', 'language', 'readout_a', 'readout_b', 'n_common', 'r', 'mean_abs_diff']);
    expect(comparisons[1]?.slice(0, 5)).toEqual(['alpha', 'en', 'plain/yesno/judge:j', 'plain/yesno/rule', '10']);
    const convergence = parseCsv(files.get('readout_convergence.csv') ?? '');
    expect(convergence[1]?.slice(0, 3)).toEqual(['plain/yesno/judge:j', 'plain/yesno/rule', '1']);
  });

  it('labels simulated data in the summary, and only simulated data', async () => {
    const sim = new Map<string, string>();
    await writeResults(async (n, c) => void sim.set(n, c), results(true), { campaign: 'demo', source: '/data/demo', generatedAt: '2026-01-01T00:00:00Z' });
    const md = sim.get('summary.md') ?? '';
    expect(md).toMatch(/^# FAR-6 analysis: demo \(simulated\)/);
    expect(md).toContain('**Simulated data.**');
    expect(md).toContain('| plain/yesno/judge:j | plain/yesno/rule | 1 |');
    expect(md).toContain('2026-01-01T00:00:00Z');
    expect(md).toContain('cost $1.2500');

    const real = new Map<string, string>();
    await writeResults(async (n, c) => void real.set(n, c), results(false), { campaign: 'demo' });
    expect(real.get('summary.md')).not.toMatch(/simulated data/i);
    const forced = new Map<string, string>();
    await writeResults(async (n, c) => void forced.set(n, c), results(false), { campaign: 'demo', simulated: true });
    expect(forced.get('summary.md')).toContain('**Simulated data.**');
  });

  it('formats a short console table', () => {
    const text = formatConsoleTable(results(true));
    expect(text).toContain('SIMULATED DATA');
    expect(text).toMatch(/plain\/yesno\/judge:j ~ plain\/yesno\/rule\s+1\s+/);
    // The token's b = 0.05 on nine stories and 0 on one: 0.045, shown with two decimals; this
    // cell has no negative-interrogative or label readout.
    expect(text).toMatch(/alpha\/en\s+0\.04\s+–\s+–/);
    expect(text).toContain('cell_habits.csv');
  });
});
