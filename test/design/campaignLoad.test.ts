import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCampaign } from '../../lib/design/loadCampaign.js';
import { CampaignFileError } from '../../lib/errors.js';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures', 'campaigns');
const fixture = (name: string): string => path.join(FIXTURES, name);

async function loadError(file: string): Promise<CampaignFileError> {
  const err: unknown = await loadCampaign(file).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CampaignFileError);
  return err as CampaignFileError;
}

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'sondage-campaign-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('loadCampaign', () => {
  it('loads the minimal fixture with every default applied', async () => {
    const campaign = await loadCampaign(fixture('minimal.yaml'), { cwd: '/run/here' });

    expect(campaign).toMatchObject({
      name: 'minimal',
      seed: 7,
      budget_usd: 0.5,
      concurrency: 16,
      data_dir: '/run/here/data',
      defaults: { max_tokens: 256 },
      folder: FIXTURES,
      design: {
        stories: 'stories.yaml',
        concept_pairs: 'concept-pairs.yaml',
        languages: ['en'],
        forms: ['plain', 'negint', 'alternative', 'ornot'],
        constraints: ['free', 'verdict', 'yesno', 'label'],
        repeats: { count: 3, fraction: 0.25 },
      },
      roles: { judge: { id: 'sim-judge', extras: { sample_rate: 0.04 }, price_source: 'table' } },
    });
    expect((campaign.design as { story_limit?: number }).story_limit).toBeUndefined();
  });

  it('loads the full fixture: snapshot prices, batch mode, thinking off, simulation passed through', async () => {
    const campaign = await loadCampaign(fixture('full.yaml'));
    const byId = new Map(campaign.models.map((m) => [m.id, m]));

    expect(campaign.data_dir).toBe(path.resolve(FIXTURES, '../out/data'));
    expect((campaign.design as { story_limit?: number }).story_limit).toBe(12);
    expect(byId.get('alpha')?.simulation).toEqual({ profile_seed: 7, keying_bias: { ja: -0.2 } });
    expect(byId.get('beta')?.settings).toEqual({ temperature: 0.7, max_tokens: 200, stop: ['\n'] });
    expect(byId.get('mini')).toMatchObject({ mode: 'batch', price: { input_per_mtok: 0.4, batch_discount: 0.5 } });
    expect(byId.get('qwen')?.settings.thinking).toBe('off');
    expect(campaign.roles['judge']?.settings).toEqual({ temperature: 0, max_tokens: 64 });
  });

  it('reports every mistake of a file in one error, each with its line', async () => {
    const file = fixture('bad-many.yaml');

    const err = await loadError(file);

    const rule = 'lowercase letters, digits, ".", "_" and "-", starting with a letter or digit (e.g. "my-campaign")';
    expect(err.message.split('\n')).toEqual([
      `${file}: name: "Bad Name" is not a safe id; use ${rule} (line 2)`,
      `${file}: budget_usd: must be greater than 0, got -1 (line 4)`,
      `${file}: design.languages[1]: "es" is not a known language; use one of en, zh, de, ja, ko, fr (line 9)`,
      `${file}: models[0].provider: "open-ai" is not a known provider; use one of openai, anthropic, openai-compatible, bedrock, simulated (line 12)`,
      `${file}: models[0].settings: unknown key "temprature"; did you mean "temperature"? (line 15)`,
      `${file}: judge.id: "alpha" is already the id of models[0]; give every model and role its own id (line 17)`,
    ]);
    expect(err.issues.map((i) => i.path)).toEqual([
      'name',
      'budget_usd',
      'design.languages[1]',
      'models[0].provider',
      'models[0].settings',
      'judge.id',
    ]);
  });

  it('points a missing key at the mapping that lacks it', async () => {
    const file = path.join(tmp, 'missing-model.yaml');
    await writeFile(
      file,
      [
        'name: x',
        'seed: 1',
        'budget_usd: 1',
        'battery: far6',
        'design: { stories: s.yaml, concept_pairs: c.yaml, languages: [en] }',
        'models:',
        '  - id: a',
        '    provider: simulated',
        'judge: { id: j, provider: simulated, model: j }',
        '',
      ].join('\n'),
    );

    const err = await loadError(file);

    expect(err.message).toBe(`${file}: models[0].model: is required; the provider's model name, e.g. gpt-4.1-mini (line 7)`);
  });

  it('gives a YAML syntax error with its line and column', async () => {
    const file = fixture('bad-syntax.yaml');

    const err = await loadError(file);

    expect(err.message.split('\n')).toHaveLength(1);
    expect(err.message).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: line 5, column 3: invalid YAML: `));
    expect(err.issues[0]).toMatchObject({ file, path: 'line 5, column 3' });
    expect(err.cause).toBeDefined();
  });

  it('refuses duplicate keys as a YAML error', async () => {
    const file = path.join(tmp, 'dup.yaml');
    await writeFile(file, 'name: a\nseed: 1\nname: b\n');

    const err = await loadError(file);

    expect(err.issues[0]?.path).toBe('line 3, column 1');
    expect(err.message).toContain('invalid YAML: Map keys must be unique');
  });

  it('names a missing file', async () => {
    const file = path.join(tmp, 'nope.yaml');

    const err = await loadError(file);

    expect(err.message).toBe(`${file}: no such campaign file; check the path`);
    expect((err.cause as NodeJS.ErrnoException).code).toBe('ENOENT');
  });

  it('reports an empty file as such', async () => {
    const file = path.join(tmp, 'empty.yaml');
    await writeFile(file, '# nothing yet\n');

    const err = await loadError(file);

    expect(err.message).toBe(
      `${file}: the file is empty; expected a campaign mapping with name, seed, budget_usd, battery, design, models`,
    );
  });
});
