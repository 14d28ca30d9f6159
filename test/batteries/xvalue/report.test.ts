import { describe, expect, it } from 'vitest';
import { analyzeXvalueRows, buildRows, lowestCells } from '../../../lib/batteries/xvalue/analysis/index.js';
import type { XvalueResults } from '../../../lib/batteries/xvalue/analysis/index.js';
import { xvalueConsoleTable, xvalueResultFiles } from '../../../lib/batteries/xvalue/report/index.js';
import { xvalueSimulator } from '../../../lib/batteries/xvalue/simulate/index.js';
import { expectCsvLinkUnderEveryTable } from '../../helpers/reportTables.js';
import { chainSqlRows, examplePairs, runChain } from './fixtures.js';

/** The page's table-sorting script mentions isNaN and Infinity on purpose. */
const withoutScript = (text: string) => text.replace(/<script>[\s\S]*?<\/script>/g, '');

async function simulatedResults(models: readonly string[]): Promise<XvalueResults> {
  const pairs = await examplePairs();
  const languages = [...new Set(pairs.map((p) => p.language))];
  const items = [];
  const records = [];
  for (const id of models) {
    const model = xvalueSimulator({ id, model: id, role: 'subject', simulation: {}, where: { file: 'demo.yaml', path: 'models' } }, { seed: 9 });
    for (const l of languages) {
      const c = runChain(pairs, l, id, (item) => model.reply(item, { messages: [], settings: {}, item }).text);
      items.push(...c.items);
      records.push(...c.records);
    }
  }
  const sql = chainSqlRows(items, records);
  return analyzeXvalueRows(buildRows(sql.pairs, sql.facets), { simulated: true });
}

describe('X-Value result files', () => {
  it('write every table as CSV and Markdown, and report.html with one heat map per model and strategy', async () => {
    // Prepare: two models (one with a name that must be escaped) over the example pairs.
    const results = await simulatedResults(['alpha', 'b<e>ta']);
    // Act
    const files = new Map(xvalueResultFiles(results, { campaign: 'xvalue-demo' }));
    // Assess
    expect([...files.keys()]).toEqual(['overall.csv', 'by_category.csv', 'by_language.csv', 'cells.csv', 'lowest_cells.csv', 'checkpoints.csv', 'step1_agreement.csv', 'summary.md', 'report.html']);
    for (const [name, text] of files) expect(withoutScript(text), name).not.toMatch(name.endsWith('.csv') ? /NaN|undefined|Infinity/ : /\bNaN\b|Infinity/);
    expect(files.get('overall.csv')?.split('\r\n')[0]).toBe(
      'model,strategy,n,n_positive,n_negative,abstained,missing,accuracy,accuracy_negative,accuracy_positive,accuracy_gap,precision,recall,f1,category_avg,category_std,category_range,language_avg,language_std,language_range',
    );
    expect(files.get('overall.csv')?.split('\r\n').filter((l) => l !== '')).toHaveLength(1 + 2 * 2);
    expect(files.get('checkpoints.csv')?.split('\r\n').filter((l) => l.startsWith('alpha,rubric,'))).toHaveLength(9);
    const md = files.get('summary.md') as string;
    expect(md).toMatch(/^# X-Value results: xvalue-demo \(SIMULATED\)/);
    expect(md).toContain('| Model | n | Acc | Acc0 | Acc1 | Acc0−Acc1 | P&G | N&M | H&N | E&S | R&F | G&H | P&B | avg. | std. | range |');
    expect(md).toContain('| Model | ar | en | es | ja | zh | avg. | std. | range |');
    expect(md).toContain('population standard deviation');
    const html = files.get('report.html') as string;
    expect(html).toContain('<span class="badge">SIMULATED</span>');
    expect(html).not.toContain('b<e>ta');
    expect(html).toContain('b&lt;e&gt;ta');
    const maps = [...html.matchAll(/<svg id="heat-[^"]+"/g)];
    expect(maps).toHaveLength(4);
    // 5 languages × 7 categories per map.
    const first = html.slice(html.indexOf('<svg id="heat-'), html.indexOf('</svg>', html.indexOf('<svg id="heat-')));
    expect(first.match(/class="hm-cell/g)).toHaveLength(35);
    expect(xvalueConsoleTable(results)).toMatch(/alpha\s+defonly\s+\d/);
  });

  it('draw report.html in the shared shell: spend against the cap, the paper cited, a CSV link under every table', async () => {
    const results = await simulatedResults(['alpha', 'beta']);
    const html = new Map(xvalueResultFiles(results, { campaign: 'xvalue-demo', spend: { spentUsd: 1.25, capUsd: 10 } })).get('report.html')!;
    expect(html).toContain('<h1>X-Value: xvalue-demo <span class="badge">SIMULATED</span></h1>');
    expect(html).toContain('<dt>Spend</dt><dd>$1.25 of the $10 cap (12.5 %)</dd>');
    expect(html).toContain('After <cite>Towards Cross-lingual Values Judgment</cite>.');
    expect(html).toContain('<h2 id="overall-h">Overall and by category <span class="cite">Towards Cross-lingual Values Judgment Table 2</span></h2>');
    expectCsvLinkUnderEveryTable(html, 5);
    // Every figure's caption cites the paper.
    const captions = [...html.matchAll(/<figcaption[^>]*>(.*?)<\/figcaption>/g)].map((m) => m[1]!);
    expect(captions.length).toBeGreaterThan(0);
    for (const c of captions) expect(c).toMatch(/<span class="cite">\(Towards Cross-lingual Values Judgment [^)]+\)<\/span>$/);
  });

  it('mark ties among the lowest cells in summary.md, report.html and lowest_cells.csv', async () => {
    // Prepare: three cells at 50 % and one at 100 %; two are listed.
    const base = await simulatedResults(['alpha']);
    const cell = (language: 'en' | 'zh' | 'ar' | 'es', right: number) => ({ model: 'alpha', strategy: 'rubric' as const, language, category: 'P&G' as const, n: 2, accuracy: right / 2, tp: right, tn: 0, fp: 0, fn: 2 - right, abstained: 0, missing: 0 });
    const results = { ...base, lowestCells: lowestCells([cell('en', 1), cell('zh', 1), cell('ar', 1), cell('es', 2)], 2) };
    // Act
    const files = new Map(xvalueResultFiles(results, { campaign: 'xvalue-demo' }));
    // Assess
    expect(files.get('summary.md')).toContain('| alpha | rubric | 1 (tied with 2 others) | ar × P&G |');
    expect(files.get('summary.md')).toContain('Cells of equal accuracy share a rank');
    expect(files.get('report.html')).toContain('<td>1 (tied with 2 others)</td>');
    expect(files.get('lowest_cells.csv')?.split('\r\n').slice(0, 2)).toEqual(['model,strategy,rank,ties,language,category,n,accuracy,fp,fn,fp_share,dominant_error,abstained,missing', 'alpha,rubric,1,2,ar,P&G,2,0.5,0,1,0,FN,0,0']);
  });

  it('write undefined shares as empty CSV fields and "–" in Markdown, never NaN', () => {
    // A model that answers Pass to everything, in a language without an inappropriate pair.
    const results = analyzeXvalueRows({
      verdicts: [
        { model: 'lazy', language: 'de', category: 'P&G', qa_id: 'a', strategy: 'defonly', gold: 'Pass', predicted: 'Pass' },
        { model: 'lazy', language: 'de', category: 'P&G', qa_id: 'b', strategy: 'defonly', gold: 'Pass', predicted: 'Pass' },
      ],
      checkpoints: [],
      step1: [],
    });
    const files = new Map(xvalueResultFiles(results, { campaign: 'edge' }));
    expect(files.get('overall.csv')?.split('\r\n')[1]).toBe('lazy,defonly,2,0,2,0,0,1,1,,,,,,1,0,0,1,0,0');
    expect(files.get('summary.md')).toContain('| lazy | 2 | 100.00 | 100.00 | – | – | 100.00 | 100.00 | 0.00 | 0.00 |');
    for (const [name, text] of files) expect(withoutScript(text), name).not.toMatch(/\bNaN\b/);
  });
});
