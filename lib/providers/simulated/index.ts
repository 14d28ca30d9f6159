export { SimulatedProvider, BOTH_SIDES_SHARE, REASON_SHARE, REVERSE_PARTICLE_SHARE } from '../../batteries/far6/simulate/SimulatedRespondent.js';
export type { SimulatedProviderOptions } from '../../batteries/far6/simulate/SimulatedRespondent.js';
export { SimulatedJudge, JUDGE_LABELS, judgeLabel, extractTag } from '../../batteries/far6/simulate/SimulatedJudge.js';
export type { JudgeLabel, SimulatedJudgeOptions } from '../../batteries/far6/simulate/SimulatedJudge.js';
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
} from '../../batteries/far6/simulate/SimulationProfile.js';
export { simulationTruth } from '../../batteries/far6/simulate/simulationTruth.js';
export type { SimulationTruthArgs } from '../../batteries/far6/simulate/simulationTruth.js';
export {
  simulationConfigSchema,
  simulatedJudgeConfigSchema,
  parseSimulationConfig,
  parseSimulatedJudgeConfig,
} from '../../batteries/far6/simulate/simulationConfig.js';
export type {
  SimulationConfig,
  SimulationConfigInput,
  SimulatedJudgeConfig,
  SimulatedJudgeConfigInput,
  ConfigLocation,
} from '../../batteries/far6/simulate/simulationConfig.js';
export { createSimulatedProvider } from './createSimulatedProvider.js';
export { classifySimulatedError } from './classifySimulatedError.js';
export { approximateTokens, approximateTokensOf, truncateToTokens } from './approximateTokens.js';
export type { CellHabits, SimulationCellTruth, SimulationTruth } from '../../batteries/far6/simulate/types.js';
