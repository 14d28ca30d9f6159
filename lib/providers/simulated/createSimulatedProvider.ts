import { SondageError } from '../../errors.js';
import type { ModelProvider } from '../types.js';
import type { ProviderContext, ProviderEntry } from '../entry.js';
import { SimulatedProvider } from './SimulatedProvider.js';

/**
 * Registry factory for `provider: simulated`: the campaign's battery builds the simulated model of
 * the entry (a respondent, or a role such as its judge, by `entry.role`), and the provider wraps it.
 */
export function createSimulatedProvider(entry: ProviderEntry, ctx: ProviderContext): ModelProvider {
  if (!ctx.simulator) {
    throw new SondageError(`${ctx.file ?? '(campaign)'}: model "${entry.id}" is simulated, but the campaign's battery has no simulated respondents; use a real provider`);
  }
  const role = entry.role ?? 'subject';
  const where = { file: ctx.file ?? '(campaign)', path: `${entry.simulationPath ?? (role === 'subject' ? `models[${entry.id}]` : role)}.simulation` };
  const model = ctx.simulator({ id: entry.id, model: entry.model, role, simulation: entry.simulation, where }, { seed: ctx.seed });
  return new SimulatedProvider(`simulated/${entry.model}`, model);
}
