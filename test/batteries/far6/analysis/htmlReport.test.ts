import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeReplies } from '../../../../lib/analysis/analyzeReplies.js';
import { far6 } from '../../../../lib/batteries/far6/index.js';
import { escapeHtml, slug } from '../../../../lib/report/html/escape.js';
import { renderReportHtml } from '../../../../lib/batteries/far6/report/html/renderReport.js';
import { domainOf, niceTicks } from '../../../../lib/report/html/svg.js';
import { fmtNumber } from '../../../../lib/report/markdown.js';
import { RESULT_FILES, writeResults } from '../../../../lib/batteries/far6/report/report.js';
import type { AnalysisResults } from '../../../../lib/batteries/far6/analysis/types.js';
import { chromiumPath } from '../../../helpers/browser.js';
import { REPO_ROOT } from '../../../helpers/campaigns.js';
import { fixtureResults } from './htmlFixture.js';

/** The rows of the table whose caption contains `caption`, as arrays of unescaped cell texts. */
function tableRows(html: string, caption: string): string[][] {
  const tables = [...html.matchAll(/<table class="sortable"><caption>(.*?)<\/caption>.*?<tbody>(.*?)<\/tbody><\/table>/gs)];
  const table = tables.find((t) => (t[1] ?? '').includes(escapeHtml(caption)));
  if (!table) throw new Error(`no table with caption ${caption}`);
  const unescape = (s: string) => s.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&amp;', '&');
  return [...(table[2] ?? '').matchAll(/<tr>(.*?)<\/tr>/gs)].map((tr) => [...(tr[1] ?? '').matchAll(/<td[^>]*>(.*?)<\/td>/gs)].map((td) => unescape(td[1] ?? '')));
}

/** The `<svg id=…>…</svg>` element with this id. */
function svgById(html: string, id: string): string {
  const start = html.indexOf(`<svg id="${id}"`);
  if (start < 0) throw new Error(`no svg ${id}`);
  return html.slice(start, html.indexOf('</svg>', start) + 6);
}

function count(text: string, needle: string | RegExp): number {
  return typeof needle === 'string' ? text.split(needle).length - 1 : [...text.matchAll(needle)].length;
}

describe('escaping', () => {
  it('escapes the five HTML specials and keeps the rest', () => {
    expect(escapeHtml(`<a href="x">'Finn' & co</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;Finn&#39; &amp; co&lt;/a&gt;');
    expect(escapeHtml('反対しないんですか')).toBe('反対しないんですか');
    expect(slug('plain/free/judge:Sonnet 5')).toBe('plain-free-judge-sonnet-5');
    expect(slug('///')).toBe('x');
  });

  it('never lets a model, language, reader or campaign name open a tag', () => {
    const evil = '<script>alert(1)</script>';
    const base = fixtureResults({ models: [`m${evil}`, 'beta'], languages: ['en', `x"><img src=y>`] });
    const html = renderReportHtml(base, { campaign: `c & ${evil}`, source: `/tmp/${evil}` });

    expect(count(html, '<script>')).toBe(1); // the page's own sorting script
    expect(html).not.toContain('<img');
    expect(html).toContain('m&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('x&quot;&gt;&lt;img src=y&gt;');
    expect(html).toContain('<title>FAR-6 analysis: c &amp; &lt;script&gt;');
  });
});

describe('renderReportHtml', () => {
  const results = fixtureResults();
  const html = renderReportHtml(results, { campaign: 'demo', generatedAt: '2026-01-02T03:04:05Z' }, { files: RESULT_FILES.filter((f) => f !== 'report.html') });

  it('is one self-contained document: no URL, no external resource, a CSP that forbids fetching', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/\ssrc=/);
    expect(html).not.toMatch(/<link\b/);
    expect(html).not.toMatch(/@import|@font-face|url\((?!#)/);
    expect(html).toContain(`content="default-src &#39;none&#39;;`);
  });

  it('has the header and every section, linked from the navigation', () => {
    expect(html).toContain('FAR-6 analysis: demo <span class="badge">SIMULATED</span>');
    expect(html).toContain('<dd>alpha, beta, gamma</dd>');
    const attempts = results.replyTotals.reduce((n, t) => n + t.attempts, 0);
    expect(attempts).toBeGreaterThan(1800);
    expect(html).toContain(`<dt>Attempts stored</dt><dd>${attempts}</dd>`);
    expect(html).toContain('<dd>2026-01-02T03:04:05Z</dd>');
    for (const id of ['convergence', 'disagreement', 'heatmaps', 'identity', 'habits', 'polarity', 'files']) {
      expect(html).toContain(`<section id="${id}"`);
      expect(html).toContain(`<a href="#${id}">`);
    }
    expect(html).toContain('<a href="story_scores.csv">story_scores.csv</a>');
    expect(html).toContain('<a href="summary.md">summary.md</a>');
  });

  it('gives every chart a title and description, and every chart a table', () => {
    const svgs = [...html.matchAll(/<svg id="([^"]+)"[^>]*role="img" aria-labelledby="([^"]+)-t \2-d"><title id="\2-t">([^<]+)<\/title><desc id="\2-d">/g)];
    expect(svgs.length).toBe(count(html, '<svg '));
    expect(svgs.length).toBeGreaterThanOrEqual(15);
    expect(count(html, '<details>')).toBeGreaterThanOrEqual(count(html, '<figure>'));
  });

  it('shows the convergence numbers of the results, the readout pairs below r 0.90 in red', () => {
    const rows = tableRows(html, 'readout_convergence.csv');
    expect(rows).toHaveLength(results.convergence.length);
    for (const c of results.convergence) {
      const row = rows.find((r) => r[0] === c.readout_a && r[1] === c.readout_b);
      expect(row?.slice(2, 7)).toEqual([String(c.n_cells), fmtNumber(c.median_r), fmtNumber(c.q10_r), fmtNumber(c.q90_r), fmtNumber(c.median_abs_diff)]);
    }
    // The negint token against its sentence diverges by construction of the fixture.
    const negint = results.convergence.find((c) => c.readout_a === 'negint/yesno/judge:j' && c.readout_b === 'negint/yesno/rule');
    expect(negint?.median_r).toBeLessThan(0.9);
    expect(svgById(html, 'chart-convergence')).toContain('<text class="row-label warn" x="');
    expect(svgById(html, 'chart-convergence')).toContain('negint/yesno/judge:j ~ negint/yesno/rule</text>');
  });

  it('draws n × n heat-map cells per readout, metric and ordering, with the pair values', () => {
    const identity = results.identity;
    expect(identity?.readouts).toEqual(['plain/label/rule', 'plain/free/judge:j']);
    for (const readout of identity?.readouts ?? []) {
      for (const id of ['story-by-model', 'residual-by-model', 'story-by-language', 'residual-by-language']) {
        const svg = svgById(html, `hm-${slug(readout)}-${id}`);
        expect(count(svg, /<rect class="hm-cell/g)).toBe(36);
        expect(count(svg, /class="hm-cell hm-diag"/g)).toBe(6);
      }
    }
    const pair = identity?.pairs.find((q) => q.readout === 'plain/label/rule' && q.model_a === 'alpha' && q.language_a === 'de' && q.model_b === 'beta' && q.language_b === 'de');
    expect(pair?.r).not.toBeNull();
    const svg = svgById(html, 'hm-plain-label-rule-story-by-language');
    // Both halves of the symmetric matrix carry the pair's r.
    expect(count(svg, `data-v="${pair?.r}"><title>alpha/de × beta/de: story-level r ${fmtNumber(pair?.r)}`)).toBe(1);
    expect(count(svg, `data-v="${pair?.r}"><title>beta/de × alpha/de: story-level r ${fmtNumber(pair?.r)}`)).toBe(1);
    // By language: de cells first, the model order inside.
    expect(svg.indexOf('>alpha/de</text>')).toBeLessThan(svg.indexOf('>gamma/de</text>'));
    expect(svg.indexOf('>gamma/de</text>')).toBeLessThan(svg.indexOf('>alpha/en</text>'));
  });

  it('shows identity counts beside chance, class intervals, habits, sign changes and polarity shares', () => {
    const counts = tableRows(html, 'plain/label/rule: identity counts');
    const residual = results.identity?.counts.find((c) => c.readout === 'plain/label/rule' && c.metric === 'residual_r');
    expect(counts.find((r) => r[0] === 'residual r')?.slice(1, 4)).toEqual([
      fmtNumber(residual?.same_model, Number.isInteger(residual?.same_model) ? 0 : 1),
      fmtNumber(residual?.expected_random, 1),
      String(residual?.n_cells),
    ]);
    const classes = tableRows(html, 'plain/label/rule: class means');
    expect(classes).toHaveLength(results.identity?.classes.filter((c) => c.readout === 'plain/label/rule').length ?? -1);

    const b = tableRows(html, 'yes/no keying bias b per cell');
    const habit = results.cellHabits.find((h) => h.model === 'beta' && h.language === 'en' && h.readout === 'negint/yesno/rule');
    expect(b).toContainEqual(['beta', 'en', 'negint/yesno/rule', String(habit?.n_stories), fmtNumber(habit?.keying_bias, 3)]);
    const signs = results.habits?.signChangeCounts.find((c) => c.readout_a === 'plain/yesno/rule');
    expect(signs?.n_changed).toBeGreaterThan(0);
    expect(html).toContain(`b changes sign in ${signs?.n_changed} of ${signs?.n_cells} cells`);
    expect(count(svgById(html, 'chart-sign-plain-yesno-rule-negint-yesno-rule'), 'class="pt pt-hi"')).toBe(signs?.n_changed);

    const polarity = tableRows(html, 'Polarity share per model, judge:j');
    for (const p of results.agreement?.polarity.filter((x) => x.level === 'model') ?? []) {
      expect(polarity).toContainEqual([p.model, String(p.n_replies), String(p.n_polarity), fmtNumber(p.share)]);
    }
    const disagreement = tableRows(html, 'reply_disagreement_summary.csv');
    expect(disagreement.map((r) => r.slice(0, 2))).toEqual([['negint', 'yesno'], ['plain', 'yesno']]);
  });
});

describe('judge audit', () => {
  it('shows agreement, kappa and opposite decisive counts per comparison and stratum when the results carry an audit', () => {
    const results = fixtureResults({ audit: true });
    const audit = results.judgeAudit;
    const html = renderReportHtml(results, { campaign: 'audit' });
    expect(html).toContain('<section id="judge-audit"');
    expect(html).toContain('<a href="#judge-audit">Judge audit</a>');
    const all = audit?.rows.find((r) => r.level === 'all');
    expect(all?.n).toBe(3 * 2 * 2 * 12);
    expect(all?.n_opposite).toBeGreaterThan(0);
    const table = tableRows(html, 'second: judge:second against judge:j (judge_audit.csv)');
    expect(table).toHaveLength(audit?.rows.length ?? -1);
    expect(table[0]).toEqual([
      'all', '*', '*', '*', String(all?.n_sampled), String(all?.n_unlabeled), String(all?.n), String(all?.n_agree),
      fmtNumber(all?.agreement, 3), fmtNumber(all?.agreement_low, 3), fmtNumber(all?.agreement_high, 3), fmtNumber(all?.kappa, 3), all?.kappa_note,
      String(all?.n_primary_decisive), String(all?.n_both_decisive), String(all?.n_opposite),
    ]);
    expect(svgById(html, 'chart-audit-second-judge-second')).toContain(`>all replies (n ${all?.n}, opposite ${all?.n_opposite})</text>`);
    // Strata: 6 cells × 2 constraints.
    expect(count(svgById(html, 'hm-audit-second-judge-second'), /<rect class="hm-cell/g)).toBe(12);
  });

  it('has no audit section without an audit, and says so when the audit paired nothing', () => {
    expect(renderReportHtml(fixtureResults(), { campaign: 'x' })).not.toContain('judge-audit');
    const html = renderReportHtml({ ...fixtureResults({ bare: true }), judgeAudit: { rows: [] } }, { campaign: 'x' });
    expect(html).toContain('No audit reading was paired with a primary judge reading.');
  });
});

describe('missing sections', () => {
  const empty: AnalysisResults = { storyScores: [], cellHabits: [], comparisons: [], convergence: [], minCommonStories: 8, cellSummary: [], replyTotals: [], itemRows: 0, simulated: false };

  it('renders results with nothing in them', () => {
    const html = renderReportHtml(empty, { campaign: 'nothing' });
    expect(html).toContain('No readout pair had ≥ 8 common stories in any cell.');
    expect(count(html, 'Not computed')).toBe(4);
    expect(html).toContain('No yes/no or label readout read by the fixed rule has story scores.');
    expect(html).toContain('No result files were listed.');
    expect(html).not.toContain('<svg ');
    expect(html).not.toContain('class="badge"');
  });

  it('renders a bare estimate (BYO replies without a second reader) with the per-cell views only', () => {
    const html = renderReportHtml(fixtureResults({ bare: true }), { campaign: 'byo' });
    expect(html).toContain('id="chart-convergence"');
    expect(html).toContain('id="chart-habit-keying-bias"');
    expect(html).toContain('Sign changes and variance shares: not computed.');
    expect(count(html, 'Not computed')).toBe(4);
  });

  it('renders one model in one language: no pairs of cells, no crash', () => {
    const html = renderReportHtml(fixtureResults({ models: ['solo'], languages: ['en'] }), { campaign: 'one' });
    expect(count(html, 'Fewer than two cells have story scores under this readout.')).toBe(2);
    const heatmaps = html.slice(html.indexOf('<section id="heatmaps"'), html.indexOf('<section id="identity"'));
    expect(heatmaps).not.toContain('<svg');
    expect(count(html, 'No cell has another cell to compare with.')).toBe(2);
    expect(html).toContain('Variance shares: no habit matrix of at least 2 models × 2 languages with variance.');
    // Polarity per cell is a 1 × 1 matrix.
    expect(count(svgById(html, 'hm-polarity-cells-judge-j'), /<rect class="hm-cell/g)).toBe(1);
  });

  it('one model in two languages: a 2 × 2 heat map', () => {
    const html = renderReportHtml(fixtureResults({ models: ['solo'], languages: ['en', 'ja'] }), { campaign: 'two' });
    expect(count(svgById(html, 'hm-plain-label-rule-story-by-model'), /<rect class="hm-cell/g)).toBe(4);
  });
});

describe('chart helpers', () => {
  it('ticks are round and cover the domain', () => {
    expect(niceTicks(-1, 1)).toEqual([-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1]);
    expect(niceTicks(0, 17)).toEqual([0, 2.5, 5, 7.5, 10, 12.5, 15]);
    expect(niceTicks(3, 3)).toEqual([3]);
  });

  it('domains hold the values and what must be included, within the clamp', () => {
    const [lo, hi] = domainOf([0.2, 0.5, null], [0]);
    expect(lo).toBeLessThan(0);
    expect(hi).toBeGreaterThan(0.5);
    expect(domainOf([0.99], [0, 1], [-1, 1])[1]).toBe(1);
    expect(domainOf([], [], [-1, 1])).toEqual([-1, 1]);
  });
});

describe('writeResults', () => {
  it('writes report.html beside the CSVs and lists it in summary.md', async () => {
    const files = new Map<string, string>();
    await writeResults(async (n, c) => void files.set(n, c), fixtureResults(), { campaign: 'demo' });
    expect(RESULT_FILES).toContain('report.html');
    expect([...files.keys()].sort()).toEqual([...RESULT_FILES].sort());
    const html = files.get('report.html') ?? '';
    for (const name of RESULT_FILES.filter((f) => f !== 'report.html')) expect(html).toContain(`<a href="${name}">`);
    expect(html).not.toContain('<a href="report.html">');
    expect(files.get('summary.md')).toContain('`report.html`');
  });
});

describe('analyzeReplies (sondage analyze --replies)', () => {
  it('writes report.html beside the other results of bring-your-own replies', async () => {
    const out = await mkdtemp(path.join(tmpdir(), 'sondage-html-byo-'));
    try {
      await analyzeReplies(far6, { replies: path.join(REPO_ROOT, 'test/fixtures/byo/sample.jsonl'), out });
      const html = await readFile(path.join(out, 'report.html'), 'utf8');
      expect(html).toContain('<h1>FAR-6 analysis: byo</h1>');
      expect(html).toContain('<dd>m1</dd>');
      expect(html).toContain('<section id="files"');
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});

describe('chromiumPath', () => {
  it('names the fix when CHROMIUM_PATH points nowhere, instead of skipping the browser test', () => {
    expect(() => chromiumPath({ CHROMIUM_PATH: '/nonexistent/chromium' })).toThrow(/CHROMIUM_PATH is \/nonexistent\/chromium, which does not exist.*node scripts\/ensure-chromium\.mjs/);
  });
});
