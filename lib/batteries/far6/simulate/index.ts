import type { SimulatorFactory } from '../../../api/battery.js';
import { SimulatedJudge } from './SimulatedJudge.js';
import { SimulatedRespondent } from './SimulatedRespondent.js';
import { parseSimulatedJudgeConfig, parseSimulationConfig } from './simulationConfig.js';

export { SimulatedRespondent, BOTH_SIDES_SHARE, REASON_SHARE, REVERSE_PARTICLE_SHARE } from './SimulatedRespondent.js';
export type { SimulatedRespondentOptions } from './SimulatedRespondent.js';
export { SimulatedJudge, JUDGE_LABELS, judgeLabel, extractTag } from './SimulatedJudge.js';
export type { JudgeLabel, SimulatedJudgeOptions } from './SimulatedJudge.js';
export {
  SimulationProfile,
  clamp01,
  defaultProfileSeed,
  GROUP_LOGIT,
  STORY_SHIFT_SD,
  SPREAD_TO_LOGIT,
  PI_MIN,
  PI_MAX,
  KEYING_BIAS_SD,
  LABEL_HABIT_SD,
  TRUTH_CELL_SHARE,
} from './SimulationProfile.js';
export { simulationTruth } from './simulationTruth.js';
export type { SimulationTruthArgs } from './simulationTruth.js';
export { simulationConfigSchema, simulatedJudgeConfigSchema, parseSimulationConfig, parseSimulatedJudgeConfig } from './simulationConfig.js';
export type { SimulationConfig, SimulationConfigInput, SimulatedJudgeConfig, SimulatedJudgeConfigInput } from './simulationConfig.js';
export type { CellHabits, SimulationCellTruth, SimulationTruth } from './types.js';

/**
 * FAR-6's simulated models (README.md beside this file): the judge roles (the judge and the audit's
 * second judge) get the simulated sentence judge, whose `simulation:` block is the judge schema;
 * the models under test get the simulated respondent.
 */
export const far6Simulator: SimulatorFactory = (entry, ctx) => {
  if (entry.role === 'judge' || entry.role === 'second_judge') {
    return new SimulatedJudge({ seed: ctx.seed, modelId: entry.id, model: entry.model, config: parseSimulatedJudgeConfig(entry.simulation, entry.where) });
  }
  return new SimulatedRespondent({ seed: ctx.seed, modelId: entry.id, model: entry.model, config: parseSimulationConfig(entry.simulation, entry.where) });
};
