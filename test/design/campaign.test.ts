import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkCampaign, closest, formatPath, parseCampaign } from '../../lib/design/campaign.js';
import { CampaignFileError } from '../../lib/errors.js';
import { campaignFileError } from '../helpers/fileErrors.js';

const CWD = '/work/camp';

/** A valid campaign document; each test changes one thing. */
function valid(): Record<string, unknown> {
  return {
    name: 'far6-demo',
    seed: 20261130,
    budget_usd: 2,
    battery: 'far6',
    design: { stories: 'stories.yaml', concept_pairs: 'concept-pairs.yaml', languages: ['en', 'zh'] },
    defaults: { temperature: 1, max_tokens: 200 },
    models: [
      { id: 'alpha', provider: 'simulated', model: 'alpha' },
      { id: 'beta', provider: 'simulated', model: 'beta' },
      { id: 'gamma', provider: 'simulated', model: 'gamma' },
    ],
    judge: { id: 'sim-judge', provider: 'simulated', model: 'judge' },
  };
}

type Doc = Record<string, unknown> & {
  design: Record<string, unknown>;
  models: Record<string, unknown>[];
  judge: Record<string, unknown>;
};

function edit(change: (doc: Doc) => void): Doc {
  const doc = valid() as Doc;
  change(doc);
  return doc;
}

/** A change that sets `fields` on model `i` of the campaign, over the ones it has. */
const withModel =
  (i: number, fields: Record<string, unknown>) =>
  (d: Doc): void => {
    d.models[i] = { ...d.models[i], ...fields };
  };

/** A change that puts `entry` in place of model `i` of the campaign. */
const replaceModel =
  (i: number, entry: Record<string, unknown>) =>
  (d: Doc): void => {
    d.models[i] = entry;
  };

/** The lines of the one CampaignFileError that parsing `raw` throws. */
function errorLines(raw: unknown): string[] {
  return campaignFileError(() => parseCampaign(raw, 'demo.yaml', { cwd: CWD })).message.split('\n');
}

describe('parseCampaign: defaults and resolution', () => {
  it('applies defaults, resolves paths against the file and prices from the table', () => {
    const campaign = parseCampaign(valid(), 'campaigns/demo.yaml', { cwd: CWD });

    expect(campaign.file).toBe('/work/camp/campaigns/demo.yaml');
    expect(campaign.concurrency).toBe(16);
    expect(campaign.data_dir).toBe('/work/camp/data');
    // The design stays as written: the battery reads its files relative to the campaign's folder.
    expect(campaign.folder).toBe('/work/camp/campaigns');
    expect(campaign.design).toEqual({
      stories: 'stories.yaml',
      concept_pairs: 'concept-pairs.yaml',
      languages: ['en', 'zh'],
      forms: ['plain', 'negint', 'alternative', 'ornot'],
      constraints: ['free', 'verdict', 'yesno', 'label'],
      repeats: { count: 3, fraction: 0.25 },
      analysis: { identity_readouts: ['plain/label/rule', 'plain/free/judge:*'], bootstrap_draws: 300 },
    });
    expect(campaign.models.map((m) => m.id)).toEqual(['alpha', 'beta', 'gamma']);
    expect(campaign.models[0]).toEqual({
      id: 'alpha',
      provider: 'simulated',
      model: 'alpha',
      settings: { temperature: 1, max_tokens: 200 },
      own_settings: {},
      price: { input_per_mtok: 0, output_per_mtok: 0 },
      price_source: 'table',
      mode: 'sync',
    });
    expect(campaign.roles['judge']?.extras).toEqual({ sample_rate: 0.04 });
    expect(campaign.roles['judge']?.settings).toEqual({ temperature: 1, max_tokens: 200 });
  });

  it('resolves data_dir against the campaign folder, and keeps max_tokens bounded without defaults', () => {
    const doc = edit((d) => {
      d.data_dir = '../out';
      delete d.defaults;
    });

    const campaign = parseCampaign(doc, 'campaigns/demo.yaml', { cwd: CWD });

    expect(campaign.data_dir).toBe('/work/camp/out');
    expect(campaign.models[0]?.settings).toEqual({ max_tokens: 256 });
  });

  it('overlays model settings on campaign defaults, explicit over campaign', () => {
    const doc = edit((d) => {
      d.models[1] = { ...d.models[1], settings: { temperature: 0, stop: ['\n'] } };
      d.judge.settings = { max_tokens: 64, thinking: 'off' };
    });

    const campaign = parseCampaign(doc, 'demo.yaml', { cwd: CWD });

    expect(campaign.models[1]?.settings).toEqual({ temperature: 0, max_tokens: 200, stop: ['\n'] });
    expect(campaign.roles['judge']?.settings).toEqual({ temperature: 1, max_tokens: 64, thinking: 'off' });
  });

  it('keeps candidate_logprobs on an openai-compatible model, also from the campaign defaults', () => {
    const vllm = { id: 'vllm', provider: 'openai-compatible', model: 'qwen', base_url: 'http://localhost:8000/v1', price: { input_per_mtok: 0, output_per_mtok: 0 } };
    const tokens = { ' Yes': 7414, ' No': 2360 };
    const own = parseCampaign(edit((d) => (d.models[0] = { ...vllm, settings: { candidate_logprobs: { tokens } } })), 'demo.yaml', { cwd: CWD });
    expect(own.models[0]?.settings.candidate_logprobs).toEqual({ tokens, method: 'logprob_token_ids' });
    const viaDefaults = edit((d) => {
      d.defaults = { max_tokens: 1, candidate_logprobs: { tokens, method: 'allowed_token_ids' } };
      d.models = [vllm];
      d.judge = { ...vllm, id: 'vllm-judge' };
    });
    const campaign = parseCampaign(viaDefaults, 'demo.yaml', { cwd: CWD });
    expect(campaign.models[0]?.settings.candidate_logprobs?.method).toBe('allowed_token_ids');
    expect(campaign.roles['judge']?.settings.candidate_logprobs?.tokens).toEqual(tokens);
  });

  it('takes a campaign price over the table, and the key variable by provider', () => {
    const doc = edit((d) => {
      d.models[0] = { id: 'mini', provider: 'openai', model: 'gpt-4.1-mini' };
      d.models[1] = {
        id: 'haiku',
        provider: 'anthropic',
        model: 'claude-haiku-4-5',
        price: { input_per_mtok: 2, output_per_mtok: 9 },
        api_key_env: 'MY_KEY',
      };
    });

    const [mini, haiku] = parseCampaign(doc, 'demo.yaml', { cwd: CWD }).models;

    expect(mini).toMatchObject({ price_source: 'table', api_key_env: 'OPENAI_API_KEY' });
    expect(mini?.price.input_per_mtok).toBe(0.4);
    expect(haiku).toMatchObject({
      price: { input_per_mtok: 2, output_per_mtok: 9 },
      price_source: 'campaign',
      api_key_env: 'MY_KEY',
    });
  });

  it('does not change its input, and gives the same result twice', () => {
    const doc = valid();
    const before = JSON.stringify(doc);

    const a = parseCampaign(doc, 'demo.yaml', { cwd: CWD });
    const b = parseCampaign(doc, 'demo.yaml', { cwd: CWD });

    expect(JSON.stringify(doc)).toBe(before);
    expect(a).toEqual(b);
  });
});

describe('parseCampaign: one error naming file, path and expectation', () => {
  const SAFE_ID_RULE = 'lowercase letters, digits, ".", "_" and "-", starting with a letter or digit';
  const cases: [string, (d: Doc) => void, string[]][] = [
    ['missing name', (d) => delete d.name, [`demo.yaml: name: is required; expected an id of ${SAFE_ID_RULE} (e.g. "my-campaign")`]],
    ['unsafe name', (d) => (d.name = 'Far 6'), [`demo.yaml: name: "Far 6" is not a safe id; use ${SAFE_ID_RULE} (e.g. "my-campaign")`]],
    ['negative budget', (d) => (d.budget_usd = -2), ['demo.yaml: budget_usd: must be greater than 0, got -2']],
    ['budget as text', (d) => (d.budget_usd = 'two'), ['demo.yaml: budget_usd: expected a number, got "two"']],
    ['fractional seed', (d) => (d.seed = 1.5), ['demo.yaml: seed: expected an integer, got 1.5']],
    ['concurrency above the cap', (d) => (d.concurrency = 5000), ['demo.yaml: concurrency: must be at most 1024, got 5000']],
    [
      'unknown language',
      (d) => (d.design.languages = ['en', 'es']),
      ['demo.yaml: design.languages[1]: "es" is not a known language; use one of en, zh, de, ja, ko, fr'],
    ],
    [
      'repeated language',
      (d) => (d.design.languages = ['en', 'zh', 'en']),
      ['demo.yaml: design.languages[2]: "en" is listed twice; list each language once'],
    ],
    ['no languages', (d) => (d.design.languages = []), ['demo.yaml: design.languages: needs at least 1 entry']],
    [
      'unknown question form',
      (d) => (d.design.forms = ['plain', 'tag']),
      ['demo.yaml: design.forms[1]: "tag" is not a known question form; use one of plain, negint, alternative, ornot'],
    ],
    [
      'unknown provider',
      withModel(2, { provider: 'open-ai' }),
      ['demo.yaml: models[2].provider: "open-ai" is not a known provider; use one of openai, anthropic, openai-compatible, bedrock, simulated'],
    ],
    [
      'duplicate model ids',
      withModel(2, { id: 'alpha' }),
      ['demo.yaml: models[2].id: "alpha" is already the id of models[0]; give every model and role its own id'],
    ],
    [
      'judge reusing a model id',
      (d) => (d.judge.id = 'beta'),
      ['demo.yaml: judge.id: "beta" is already the id of models[1]; give every model and role its own id'],
    ],
    [
      'model entry without model',
      (d) => delete d.models[0]?.model,
      ["demo.yaml: models[0].model: is required; the provider's model name, e.g. gpt-4.1-mini"],
    ],
    ['no models', (d) => (d.models = []), ['demo.yaml: models: needs at least 1 entry']],
    [
      'unknown key with a suggestion',
      withModel(0, { settings: { temprature: 0.5 } }),
      ['demo.yaml: models[0].settings: unknown key "temprature"; did you mean "temperature"?'],
    ],
    [
      'swapped letters in a root key',
      (d) => {
        d.nmae = d.name;
        delete d.name;
      },
      [
        `demo.yaml: name: is required; expected an id of ${SAFE_ID_RULE} (e.g. "my-campaign")`,
        'demo.yaml: unknown key "nmae"; did you mean "name"?',
      ],
    ],
    [
      'unknown key far from any known one',
      (d) => (d.design.colour = 'blue'),
      [
        'demo.yaml: design: unknown key "colour"; known keys here: stories, concept_pairs, languages, forms, constraints, repeats, story_limit, analysis',
      ],
    ],
    [
      'simulation on a non-simulated provider',
      replaceModel(0, { id: 'mini', provider: 'openai', model: 'gpt-4.1-mini', simulation: { bias: 1 } }),
      ['demo.yaml: models[0].simulation: only a simulated model takes simulation settings; remove it or set provider: simulated (provider is openai)'],
    ],
    [
      'temperature out of range',
      (d) => (d.defaults = { temperature: 3 }),
      ['demo.yaml: defaults.temperature: must be at most 2, got 3'],
    ],
    [
      'fractional max_tokens',
      (d) => (d.judge.settings = { max_tokens: 10.5 }),
      ['demo.yaml: judge.settings.max_tokens: expected an integer, got 10.5'],
    ],
    [
      'unknown reasoning effort',
      withModel(1, { settings: { reasoning_effort: 'extreme' } }),
      ['demo.yaml: models[1].settings.reasoning_effort: "extreme" is not a known reasoning effort; use one of none, minimal, low, medium, high'],
    ],
    [
      'thinking neither off nor a budget',
      withModel(1, { settings: { thinking: 'on' } }),
      ['demo.yaml: models[1].settings.thinking: expected "off" or { budget_tokens: <integer ≥ 1> }, got "on"'],
    ],
    [
      'thinking budget of zero',
      withModel(1, { settings: { thinking: { budget_tokens: 0 } } }),
      ['demo.yaml: models[1].settings.thinking.budget_tokens: must be at least 1, got 0'],
    ],
    [
      'thinking budget that leaves no room for the reply',
      withModel(1, { settings: { thinking: { budget_tokens: 1024 } } }),
      ['demo.yaml: models[1].settings: thinking.budget_tokens (1024) must be below max_tokens (200); raise max_tokens'],
    ],
    [
      'unknown battery',
      (d) => (d.battery = 'far7'),
      ['demo.yaml: battery: "far7" is not a known battery; use one of far6, xvalue, ptrue; a battery of your own is named by its folder (battery: ./far7/), and a deployed stack runs those it was deployed with (-c sondage:batteries)'],
    ],
    [
      'model with no known price',
      replaceModel(0, { id: 'next', provider: 'openai', model: 'gpt-9' }),
      [
        'demo.yaml: models[0].price: no list price is known for openai/gpt-9 (price table 2026-11-30); add price: { input_per_mtok: …, output_per_mtok: … }',
      ],
    ],
    [
      'negative price',
      withModel(0, { price: { input_per_mtok: -1, output_per_mtok: 0 } }),
      ['demo.yaml: models[0].price.input_per_mtok: must be at least 0, got -1'],
    ],
    [
      // A price per token where a price per million belongs would let the cap count a millionth of the spend.
      'a price per token',
      withModel(0, { price: { input_per_mtok: 0.0000025, output_per_mtok: 10 } }),
      ['demo.yaml: models[0].price.input_per_mtok: 0.0000025 looks like a price per token; prices here are US$ per million tokens (×1,000,000 = 2.5), or 0'],
    ],
    [
      'a price no model has',
      withModel(0, { price: { input_per_mtok: 1, output_per_mtok: 1e308 } }),
      ['demo.yaml: models[0].price.output_per_mtok: must be at most 10000 (US$ per million tokens), got 1e+308'],
    ],
    [
      'openai-compatible without base_url',
      replaceModel(0, { id: 'qwen', provider: 'openai-compatible', model: 'qwen3-8b', price: { input_per_mtok: 0, output_per_mtok: 0 } }),
      ["demo.yaml: models[0].base_url: is required for provider openai-compatible; the server's URL, e.g. http://localhost:8000/v1"],
    ],
    [
      'base_url that is not a URL',
      replaceModel(0, { id: 'qwen', provider: 'openai-compatible', model: 'qwen3-8b', base_url: 'localhost:8000', price: { input_per_mtok: 0, output_per_mtok: 0 } }),
      ['demo.yaml: models[0].base_url: "localhost:8000" is not an http(s) URL; e.g. http://localhost:8000/v1'],
    ],
    [
      'network settings on a simulated model',
      withModel(0, { base_url: 'http://localhost:1/v1' }),
      ['demo.yaml: models[0].base_url: a simulated model makes no network calls; remove base_url'],
    ],
    [
      'batch mode without a batch API',
      withModel(0, { mode: 'batch' }),
      ['demo.yaml: models[0].mode: batch needs a provider with a batch API (openai, anthropic, bedrock); use sync for simulated'],
    ],
    [
      'batch mode with a price lacking a batch discount',
      replaceModel(0, { id: 'mini', provider: 'openai', model: 'gpt-4.1-mini', mode: 'batch', price: { input_per_mtok: 1, output_per_mtok: 2 } }),
      ['demo.yaml: models[0].price: has no batch_discount, which batch mode needs; add price.batch_discount (0.5 for most providers)'],
    ],
    [
      'candidate_logprobs on an OpenAI model',
      replaceModel(0, { id: 'mini', provider: 'openai', model: 'gpt-4.1-mini', settings: { candidate_logprobs: { tokens: { ' Yes': 7414 } } } }),
      [
        'demo.yaml: models[0].settings.candidate_logprobs: only openai-compatible endpoints (vLLM) take candidate_logprobs; remove it, or serve the model with vLLM as provider openai-compatible (provider is openai)',
      ],
    ],
    [
      'candidate_logprobs on the judge',
      (d) => (d.judge = { ...d.judge, settings: { candidate_logprobs: { tokens: { ' Yes': 7414 } } } }),
      [
        'demo.yaml: judge.settings.candidate_logprobs: only openai-compatible endpoints (vLLM) take candidate_logprobs; remove it, or serve the model with vLLM as provider openai-compatible (provider is simulated)',
      ],
    ],
    [
      'campaign-wide candidate_logprobs reaching models that cannot take it',
      (d) => {
        d.defaults = { candidate_logprobs: { tokens: { ' Yes': 7414 } } };
        d.models[1] = { id: 'vllm', provider: 'openai-compatible', model: 'qwen', base_url: 'http://localhost:8000/v1', price: { input_per_mtok: 0, output_per_mtok: 0 } };
        d.models[2] = { id: 'claude', provider: 'anthropic', model: 'claude-x', price: { input_per_mtok: 1, output_per_mtok: 2 } };
      },
      [
        'demo.yaml: defaults.candidate_logprobs: reaches models[0] (simulated), models[2] (anthropic), judge (simulated), but only openai-compatible endpoints (vLLM) take candidate_logprobs; set it in the settings of the openai-compatible models instead',
      ],
    ],
    [
      'judge sample rate above 1',
      (d) => (d.judge.sample_rate = 1.5),
      ['demo.yaml: judge.sample_rate: must be at most 1, got 1.5'],
    ],
  ];

  it.each(cases)('%s', (_name, change, expected) => {
    expect(errorLines(edit(change))).toEqual(expected);
  });

  it('never echoes what was put in api_key_env', () => {
    const secret = 'sk-proj-THIS-IS-A-KEY-1234567890';
    const doc = edit((d) => (d.models[0] = { id: 'mini', provider: 'openai', model: 'gpt-4.1-mini', api_key_env: secret }));

    const lines = errorLines(doc);

    expect(lines).toEqual([
      'demo.yaml: models[0].api_key_env: expected the name of an environment variable such as OPENAI_API_KEY, not the key itself',
    ]);
    expect(lines.join('\n')).not.toContain('THIS-IS-A-KEY');
  });

  it.each([
    ['an empty document', null, 'demo.yaml: the file is empty; expected a campaign mapping with name, seed, budget_usd, battery, design, models'],
    ['a list', [1, 2], 'demo.yaml: expected a campaign mapping with name, seed, budget_usd, battery, design, models, got a list; is this the campaign file?'],
  ])('refuses %s as a campaign', (_name, raw, expected) => {
    expect(errorLines(raw)).toEqual([expected]);
  });

  it('reports every issue of a document in one error, with structured issues', () => {
    const doc = edit((d) => {
      d.budget_usd = 0;
      d.design.languages = ['en', 'xx'];
      d.models[1] = { id: 'Beta', provider: 'simulated' };
      d.models[2] = { ...d.models[2], id: 'alpha', provider: 'openai', simulation: {} };
    });

    let error: CampaignFileError | undefined;
    try {
      parseCampaign(doc, 'demo.yaml', { cwd: CWD });
    } catch (err) {
      error = err as CampaignFileError;
    }

    expect(error).toBeInstanceOf(CampaignFileError);
    expect(error?.issues.map((i) => [i.file, i.path])).toEqual([
      ['demo.yaml', 'budget_usd'],
      ['demo.yaml', 'design.languages[1]'],
      ['demo.yaml', 'models[1].id'],
      ['demo.yaml', 'models[1].model'],
      ['demo.yaml', 'models[2].id'],
      ['demo.yaml', 'models[2].simulation'],
      ['demo.yaml', 'models[2].price'],
    ]);
    expect(error?.message.split('\n')).toHaveLength(7);
    expect(error?.message).toContain('models[2].price: no list price is known for openai/gamma');
  });

  it('returns the issues without throwing from checkCampaign', () => {
    const result = checkCampaign(edit((d) => delete (d as Record<string, unknown>).judge), 'demo.yaml');

    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.issues).toEqual([
      { file: 'demo.yaml', path: 'judge', segments: ['judge'], message: 'is required; expected a mapping' },
    ]);
  });
});

describe('paths and suggestions', () => {
  it('formats paths the way the campaign file reads', () => {
    expect(formatPath(['models', 2, 'provider'])).toBe('models[2].provider');
    expect(formatPath(['models', 0, 'simulation', 'odd key'])).toBe('models[0].simulation["odd key"]');
    expect(formatPath([])).toBe('');
  });

  it('suggests a near key and nothing for a far one', () => {
    const known = ['temperature', 'top_p', 'max_tokens'];
    expect(closest('temprature', known)).toBe('temperature');
    expect(closest('max_token', known)).toBe('max_tokens');
    expect(closest('Top_P', known)).toBe('top_p');
    expect(closest('colour', known)).toBeUndefined();
  });

  it('resolves an absolute campaign path regardless of cwd', () => {
    const file = path.join(CWD, 'x', 'demo.yaml');
    const campaign = parseCampaign(valid(), file, { cwd: '/elsewhere' });
    expect(campaign.folder).toBe(path.join(CWD, 'x'));
    expect(path.resolve(campaign.folder, (campaign.design as { stories: string }).stories)).toBe(path.join(CWD, 'x', 'stories.yaml'));
  });
});
