import type { ModelProvider } from '../types.js';
import type { ProviderContext, ProviderEntry } from '../registry.js';
import { SimulatedJudge } from '../../batteries/far6/simulate/SimulatedJudge.js';
import { SimulatedProvider } from '../../batteries/far6/simulate/SimulatedRespondent.js';
import { parseSimulatedJudgeConfig, parseSimulationConfig } from '../../batteries/far6/simulate/simulationConfig.js';

/**
 * Registry factory for `provider: simulated`. The entry's `role` picks the simulator: `judge`
 * gives the simulated sentence judge (its `simulation:` block is the judge schema), anything
 * else the simulated respondent. Both are labelled simulated (`simulated/<model>`, `simulated: true`).
 */
export function createSimulatedProvider(entry: ProviderEntry, ctx: ProviderContext): ModelProvider {
  const where = { file: ctx.file ?? '(campaign)', path: `${entry.role === 'judge' ? 'judge' : `models[${entry.id}]`}.simulation` };
  if (entry.role === 'judge') {
    return new SimulatedJudge({ seed: ctx.seed, modelId: entry.id, model: entry.model, config: parseSimulatedJudgeConfig(entry.simulation, where) });
  }
  return new SimulatedProvider({ seed: ctx.seed, modelId: entry.id, model: entry.model, config: parseSimulationConfig(entry.simulation, where) });
}
