import type { ModelRef } from '../../../api/battery.js';
import type { QaPair } from '../types.js';
import { parseXvalueSimulation } from './simulationConfig.js';
import { xvalueModelTruth } from './trueRates.js';
import type { XvalueModelTruth } from './trueRates.js';

/**
 * What simulation_truth.json holds for a campaign (LoadedDesign.simulationTruth): for each
 * simulated model under test, its true error rates per strategy × language × category and the
 * accuracies they imply on the design's pairs. Models of other providers are left out.
 * @example xvalueSimulationTruth(campaign.models, pairs, campaign.file)
 */
export function xvalueSimulationTruth(models: readonly ModelRef[], pairs: readonly QaPair[], file = '(campaign)'): { readonly models: readonly XvalueModelTruth[] } {
  return {
    models: models
      .filter((m) => m.provider === 'simulated')
      .map((m) => xvalueModelTruth(m.id, parseXvalueSimulation(m.simulation, { file, path: `models[${m.id}].simulation` }), pairs)),
  };
}
