import { describe, expect, it } from 'vitest';
import { SondageError } from '../../lib/errors.js';
import { KNOWN_PROVIDERS, SimulatedProvider, UnknownProviderError, createProvider } from '../../lib/providers/index.js';
import { far6Simulator } from '../../lib/batteries/far6/simulate/index.js';
import { makeItem } from '../batteries/far6/simulate/simulatedItems.js';

describe('createProvider', () => {
  it('builds the simulated respondent from a campaign model entry', async () => {
    const p = await createProvider({ id: 'alpha', provider: 'simulated', model: 'alpha', simulation: { refusal_rate: 0 } }, { seed: 7, simulator: far6Simulator });
    expect(p).toBeInstanceOf(SimulatedProvider);
    expect(p.id).toBe('simulated/alpha');
    const item = makeItem();
    const r = await p.generate({ messages: item.messages, settings: item.settings, item });
    expect(r.text.length).toBeGreaterThan(0);
  });

  it('rejects an unknown provider name with a SondageError that lists the known ones', async () => {
    const err = await createProvider({ id: 'm2', provider: 'open-ai', model: 'gpt' }, { seed: 7, file: 'demo.yaml' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SondageError);
    expect(err).toBeInstanceOf(UnknownProviderError);
    expect((err as Error).message).toBe('demo.yaml: model "m2": provider "open-ai" is not a known provider; use one of anthropic, bedrock, openai, openai-compatible, simulated');
    expect((err as UnknownProviderError).known).toEqual(KNOWN_PROVIDERS);
    // a name inherited from Object.prototype is not a provider
    await expect(createProvider({ id: 'm', provider: 'toString', model: 'x' }, { seed: 7 })).rejects.toThrow(/use one of anthropic, bedrock, openai, openai-compatible, simulated/);
  });

  it('refuses a simulated model when the battery has no simulator', async () => {
    await expect(createProvider({ id: 'alpha', provider: 'simulated', model: 'alpha' }, { seed: 7, file: 'demo.yaml' })).rejects.toThrow(
      /demo\.yaml: model "alpha" is simulated, but the campaign's battery has no simulated respondents/,
    );
  });

  it('reports invalid simulation settings with the file and the path inside it', async () => {
    await expect(
      createProvider({ id: 'alpha', provider: 'simulated', model: 'alpha', simulation: { error_rate: 1.5 } }, { seed: 7, file: 'demo.yaml', simulator: far6Simulator }),
    ).rejects.toThrow(/demo\.yaml: models\[alpha\]\.simulation\.error_rate/);
  });
});
