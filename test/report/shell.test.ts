/**
 * The report shell: the header every battery's report.html shares (study, campaign, SIMULATED
 * badge, models, design, spend against the cap), the navigation, the sections a battery supplies
 * with their citations, a CSV link under every table, the list of result files, and a page that
 * may load nothing.
 */
import { describe, expect, it } from 'vitest';
import { renderReportPage, reportFigure, spendMarkdown, spendText, spendWarning } from '../../lib/api/battery.js';
import { htmlTable, tableDetails } from '../../lib/api/battery.js';
import type { ReportContent } from '../../lib/api/battery.js';

const content: ReportContent = {
  study: 'Likert',
  paper: 'A Paper on <Scales>',
  simulated: false,
  models: ['alpha', 'beta'],
  design: [['Languages', 'en, fr']],
  sections: [
    {
      id: 'scores',
      title: 'Scores per model',
      cite: 'A Paper on <Scales> §3',
      body: [
        reportFigure('<svg class="chart"><g class="legend"></g></svg>', 'Mean score per model', { cite: 'Figure 1', table: { caption: 'Means', header: ['model', 'mean'], rows: [['alpha', '0.5']], csv: 'scores.csv' } }),
        htmlTable({ caption: 'Counts', header: ['model', 'n'], rows: [['alpha', '3']], csv: 'counts.csv' }),
      ],
      alsoIn: ['Counts'],
    },
  ],
  files: ['scores.csv', 'counts.csv', 'summary.md'],
};

describe('the report shell', () => {
  it('heads the page with the campaign, the models, the design and the spend against the cap', () => {
    const html = renderReportPage(content, { campaign: 'likert-demo', source: '<data folder>/campaigns/likert-demo/', spend: { spentUsd: 0.0123, capUsd: 5 } });
    expect(html).toContain('<h1>Likert: likert-demo</h1>');
    expect(html).toContain('<title>Likert: likert-demo</title>');
    expect(html).toContain('<dt>Spend</dt><dd>$0.0123 of the $5 cap (0.2 %)</dd>');
    expect(html).toContain('<dt>Models</dt><dd>alpha, beta</dd>');
    expect(html).toContain('<dt>Languages</dt><dd>en, fr</dd>');
    expect(html).toContain('<dt>Source</dt><dd>&lt;data folder&gt;/campaigns/likert-demo/</dd>');
    expect(html).toContain('After <cite>A Paper on &lt;Scales&gt;</cite>.');
    expect(html).not.toContain('SIMULATED');
  });

  it('shows the SIMULATED badge and its note when the results or the campaign say so', () => {
    for (const [c, meta] of [
      [{ ...content, simulated: true }, { campaign: 'x' }],
      [content, { campaign: 'x', simulated: true }],
    ] as const) {
      const html = renderReportPage(c, meta);
      expect(html).toContain('<span class="badge">SIMULATED</span>');
      expect(html).toContain('<strong>Simulated data.</strong>');
      expect(html).toContain('<title>Likert: x (simulated)</title>');
    }
  });

  it('leaves the spend out where no cap applies', () => {
    expect(renderReportPage(content, { campaign: 'x' })).not.toContain('<dt>Spend</dt>');
    expect(spendText(undefined)).toBeUndefined();
    expect(spendText({ spentUsd: 2.5, capUsd: 2 })).toBe('$2.5 of the $2 cap (125.0 %)');
  });

  it('warns where spend passed the cap or a provider reported more than its calls reserved, naming the model', () => {
    expect(spendWarning({ spentUsd: 1.5, capUsd: 2 })).toBeUndefined();
    expect(spendMarkdown({ spentUsd: 1.5, capUsd: 2 })).toEqual(['Spend: $1.5 of the $2 cap (75.0 %)']);
    expect(spendMarkdown(undefined)).toEqual([]);
    const past = { spentUsd: 2.5, capUsd: 2, overrun: { model: 'openai/gpt-x', excessUsd: 0.75 } };
    expect(spendWarning(past)).toBe('PAST THE CAP by $0.5: openai/gpt-x reported usage $0.75 past what its calls reserved');
    expect(spendMarkdown(past)).toEqual(['Spend: $2.5 of the $2 cap (125.0 %)', '> **PAST THE CAP by $0.5: openai/gpt-x reported usage $0.75 past what its calls reserved**']);
    // An overrun that the cap's headroom absorbed is still named; spend past the cap with no ledger record too.
    expect(spendWarning({ spentUsd: 1, capUsd: 2, overrun: { model: 'm', excessUsd: 0.1 } })).toBe('OVERRUN: m reported usage $0.1 past what its calls reserved (spend stayed within the cap)');
    expect(spendWarning({ spentUsd: 2.25, capUsd: 2 })).toBe('PAST THE CAP by $0.25');
    const html = renderReportPage(content, { campaign: 'x', spend: past });
    expect(html).toContain('<p class="notice" role="note"><strong>PAST THE CAP by $0.5: openai/gpt-x reported usage $0.75 past what its calls reserved.</strong>');
    expect(renderReportPage(content, { campaign: 'x', spend: { spentUsd: 1, capUsd: 2 } })).not.toContain('PAST THE CAP');
  });

  it('links every section from the navigation and cites the paper beside its title and under each figure', () => {
    const html = renderReportPage(content, { campaign: 'x' });
    expect(html).toContain('<li><a href="#scores">Scores per model</a></li>');
    expect(html).toContain('<li><a href="#files">Files: every number as CSV</a></li>');
    expect(html).toContain('<section id="scores" data-summary="Counts" aria-labelledby="scores-h"><h2 id="scores-h">Scores per model <span class="cite">A Paper on &lt;Scales&gt; §3</span></h2>');
    expect(html).toContain('<figcaption>Mean score per model <span class="cite">(Figure 1)</span></figcaption>');
    expect(html).toContain('<li><a href="summary.md">summary.md</a></li>');
  });

  it('puts a CSV link under every table, outside the fold of a folded one', () => {
    const html = renderReportPage(content, { campaign: 'x' });
    expect(html.match(/<\/table><\/div><p class="csv-link">/g)).toHaveLength(1);
    expect(html).toContain('</table></div></details><p class="csv-link">CSV: <a href="scores.csv">scores.csv</a></p>');
    expect(html).toContain('</table></div><p class="csv-link">CSV: <a href="counts.csv">counts.csv</a></p>');
    expect(tableDetails({ caption: 'c', header: ['a'], rows: [] })).not.toContain('csv-link');
  });

  it('may load nothing: a Content-Security-Policy that forbids every fetch, no external script or style', () => {
    const html = renderReportPage(content, { campaign: 'x' });
    expect(html).toContain('<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;; script-src &#39;unsafe-inline&#39;;');
    expect(html).not.toMatch(/<script src=|<link |https?:\/\//);
  });
});
