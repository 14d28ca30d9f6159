export { SimulatedProvider, BOTH_SIDES_SHARE, REASON_SHARE, REVERSE_PARTICLE_SHARE } from './SimulatedProvider.js';
export type { SimulatedProviderOptions } from './SimulatedProvider.js';
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
export {
  simulationConfigSchema,
  simulatedJudgeConfigSchema,
  parseSimulationConfig,
  parseSimulatedJudgeConfig,
} from './simulationConfig.js';
export type {
  SimulationConfig,
  SimulationConfigInput,
  SimulatedJudgeConfig,
  SimulatedJudgeConfigInput,
  ConfigLocation,
} from './simulationConfig.js';
export { createSimulatedProvider } from './createSimulatedProvider.js';
export { classifySimulatedError } from './classifySimulatedError.js';
export { approximateTokens, approximateTokensOf, truncateToTokens } from './approximateTokens.js';
export type { CellHabits, SimulationCellTruth, SimulationTruth } from './types.js';
