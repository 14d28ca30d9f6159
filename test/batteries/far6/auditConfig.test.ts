import { describe, expect, it } from 'vitest';
import { parseCampaign } from '../../../lib/design/campaign.js';
import { DEFAULT_AUDIT_PER_STRATUM, judgeSettingsOf } from '../../../lib/batteries/far6/design.js';
import { CampaignFileError } from '../../../lib/errors.js';

// The judge.audit block of the campaign file (Same Judgment, Different Yes "Sentence judging").

const CWD = '/work/camp';

function doc(audit: unknown): Record<string, unknown> {
  return {
    name: 'audit-demo',
    seed: 77,
    budget_usd: 2,
    battery: 'far6',
    design: { stories: 'stories.yaml', concept_pairs: 'concept-pairs.yaml', languages: ['en'] },
    defaults: { temperature: 1, max_tokens: 150 },
    models: [{ id: 'alpha', provider: 'simulated', model: 'alpha' }],
    judge: { id: 'judge', provider: 'simulated', model: 'judge', ...(audit === undefined ? {} : { audit }) },
  };
}

function errorLines(raw: unknown): string[] {
  try {
    parseCampaign(raw, 'demo.yaml', { cwd: CWD });
  } catch (err) {
    expect(err).toBeInstanceOf(CampaignFileError);
    return (err as CampaignFileError).message.split('\n');
  }
  throw new Error('expected a CampaignFileError');
}

describe('judge.audit', () => {
  it('is absent unless asked for', () => {
    expect(judgeSettingsOf(parseCampaign(doc(undefined), 'demo.yaml', { cwd: CWD }))?.audit).toBeUndefined();
  });

  it('defaults to a retest of 30 replies per stratum, seeded by the campaign seed', () => {
    const audit = judgeSettingsOf(parseCampaign(doc({}), 'demo.yaml', { cwd: CWD }))?.audit;
    expect(audit).toEqual({ per_stratum: DEFAULT_AUDIT_PER_STRATUM, seed: 77, retest: true, secondJudge: false });
  });

  it('resolves the second judge like a model entry: settings over the campaign defaults, a price', () => {
    const campaign = parseCampaign(
      doc({
        per_stratum: 5,
        seed: 9,
        retest: false,
        second_judge: { id: 'judge-b', provider: 'simulated', model: 'judge-b', settings: { temperature: 0 }, simulation: { error_rate: 0.1 } },
      }),
      'demo.yaml',
      { cwd: CWD },
    );
    const audit = judgeSettingsOf(campaign)?.audit;
    expect(audit?.per_stratum).toBe(5);
    expect(audit?.seed).toBe(9);
    expect(audit?.retest).toBe(false);
    expect(audit?.secondJudge).toBe(true);
    // The second judge is the battery's role second_judge, an entry like every model's.
    expect(campaign.roles['second_judge']).toMatchObject({
      role: 'second_judge',
      at: ['judge', 'audit', 'second_judge'],
      id: 'judge-b',
      provider: 'simulated',
      settings: { temperature: 0, max_tokens: 150 },
      simulation: { error_rate: 0.1 },
      mode: 'sync',
      price_source: 'table',
    });
  });

  it('refuses an audit that asks for nothing, naming the path', () => {
    expect(errorLines(doc({ retest: false }))).toEqual([
      'demo.yaml: judge.audit: asks for nothing: set retest: true, add a second_judge, or remove the audit block',
    ]);
  });

  it('checks the second judge as it checks every model: its own id, known keys, valid numbers', () => {
    expect(errorLines(doc({ second_judge: { id: 'alpha', provider: 'simulated', model: 'x' } }))).toEqual([
      'demo.yaml: judge.audit.second_judge.id: "alpha" is already the id of models[0]; give every model and role its own id',
    ]);
    expect(errorLines(doc({ per_stratum: 0, second_judge: { id: 'j2', provider: 'open-ai', model: 'x' } }))).toEqual([
      'demo.yaml: judge.audit.per_stratum: must be at least 1, got 0',
      'demo.yaml: judge.audit.second_judge.provider: "open-ai" is not a known provider; use one of openai, anthropic, openai-compatible, bedrock, simulated',
    ]);
    expect(errorLines(doc({ per_stratm: 5 }))).toEqual(['demo.yaml: judge.audit: unknown key "per_stratm"; did you mean "per_stratum"?']);
  });
});
