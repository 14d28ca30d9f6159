/**
 * The simulated models' true parameters, written beside a campaign's results so that what the
 * analysis recovered can be checked against what the simulator was told (DESIGN.md "Without
 * network": the simulated provider's "true values are known"). The local analysis and the AWS
 * report write the same file.
 */
import type { LoadedDesign } from '../battery/types.js';
import type { Campaign } from '../design/campaign.js';

/** Name of the results file holding the simulation truth. */
export const SIMULATION_TRUTH_FILE = 'simulation_truth.json';

/**
 * `[SIMULATION_TRUTH_FILE, its JSON]` when the campaign has simulated models under test and the
 * battery knows their truth; otherwise undefined.
 * @example const file = simulationTruthFile(ctx); if (file) await store.put(resultsKey(name, file[0]), file[1]);
 */
export function simulationTruthFile(ctx: { readonly campaign: Campaign; readonly design: LoadedDesign }): readonly [string, string] | undefined {
  const simulatedModels = ctx.campaign.models.filter((m) => m.provider === 'simulated');
  const truth = simulatedModels.length > 0 ? ctx.design.simulationTruth?.(simulatedModels) : undefined;
  return truth === undefined ? undefined : [SIMULATION_TRUTH_FILE, JSON.stringify(truth, null, 2)];
}
