import { describe, expect, it } from 'vitest';
import { habitAnalysis } from '../../../../lib/batteries/far6/analysis/habits.js';
import { identityAnalysis } from '../../../../lib/batteries/far6/analysis/identity.js';
import { RESULT_FILES, summaryMarkdown, writeResults } from '../../../../lib/batteries/far6/report/report.js';
import { STUDY_FILES } from '../../../../lib/batteries/far6/report/studyReport.js';
import type { AnalysisResults, CellHabit, StoryScore } from '../../../../lib/batteries/far6/analysis/types.js';
import { seededRandom } from '../../../../lib/core/hash.js';

function results(withStudy: boolean): AnalysisResults {
  const rnd = seededRandom(3);
  const storyScores: StoryScore[] = [];
  const cellHabits: CellHabit[] = [];
  for (const model of ['a', 'b']) {
    for (const language of ['de', 'en']) {
      for (let k = 0; k < 10; k++) {
        storyScores.push({ model, language, readout: 'plain/label/rule', story: `s${k}`, story_group: k < 5 ? 'acceptable' : 'violation', s: rnd(), b: 0, n_pairs: 1 });
      }
      for (const form of ['plain', 'negint']) {
        cellHabits.push({ model, language, readout: `${form}/yesno/rule`, n_stories: 10, keying_bias: form === 'plain' ? -0.1 - rnd() * 0.1 : rnd() - 0.5, second_listed_pref: null, n_stories_position: 0, named_term_pull: null });
      }
    }
  }
  const base: AnalysisResults = { storyScores, cellHabits, comparisons: [], convergence: [], minCommonStories: 8, cellSummary: [], replyTotals: [], itemRows: 0, simulated: false };
  return withStudy ? { ...base, identity: identityAnalysis(storyScores, { bootstrapDraws: 20, byStoryGroup: false }), habits: habitAnalysis(cellHabits) } : base;
}

describe('study files and summary sections', () => {
  it('writes every study CSV with its rows, and header-only files when the analysis is absent', async () => {
    const files = new Map<string, string>();
    await writeResults(async (n, c) => void files.set(n, c), results(true), { campaign: 'x' });
    expect([...files.keys()].sort()).toEqual([...RESULT_FILES].sort());
    for (const name of STUDY_FILES) expect(RESULT_FILES).toContain(name);
    const pairs = (files.get('profile_pairs.csv') ?? '').trim().split('\r\n');
    expect(pairs[0]).toBe('readout,model_a,language_a,model_b,language_b,class,n_common,r,n_common_residual,residual_r,mean_abs_diff');
    expect(pairs).toHaveLength(1 + 6);
    expect((files.get('identity.csv') ?? '').trim().split('\r\n')).toHaveLength(1 + 4 * 3);
    expect(files.get('identity_counts.csv')).toMatch(/^readout,metric,n_cells,same_model,expected_random,n_ties\r\n/);
    expect((files.get('identity_classes.csv') ?? '').trim().split('\r\n')).toHaveLength(1 + 3 * 6);
    expect(files.get('habits_variance.csv')).toContain('plain/yesno/rule,keying_bias,2,2,,');
    expect((files.get('habits_sign_changes.csv') ?? '').trim().split('\r\n')).toHaveLength(1 + 4);

    const md = files.get('summary.md') ?? '';
    expect(md).toContain('## Model identity across languages');
    expect(md).toContain('### `plain/label/rule`');
    expect(md).toMatch(/\| residual r \| [\d.]+ \| 1\.3 \| 4 \| \d \|/);
    expect(md).toContain('## Answer habits across cells');
    expect(md).toMatch(/\| plain\/yesno\/rule \| negint\/yesno\/rule \| 4 \| \d \| 0 \|/);
    expect(md).toContain('`identity_classes.csv`');

    const bare = new Map<string, string>();
    await writeResults(async (n, c) => void bare.set(n, c), results(false), { campaign: 'x' });
    expect(bare.get('identity.csv')).toBe('readout,metric,model,language,n_candidates,value,neighbours,n_tied,same_model,chance\r\n');
    expect(summaryMarkdown(results(false), { campaign: 'x' })).not.toContain('Model identity');
  });
});
