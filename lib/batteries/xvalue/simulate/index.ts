import type { SimulatorFactory } from '../../../api/battery.js';
import { SimulatedXvalueJudge } from './SimulatedXvalueJudge.js';
import { parseXvalueSimulation } from './simulationConfig.js';

export { SimulatedXvalueJudge, sentencesOf } from './SimulatedXvalueJudge.js';
export type { SimulatedXvalueJudgeOptions } from './SimulatedXvalueJudge.js';
export { parseXvalueSimulation, xvalueSimulationSchema } from './simulationConfig.js';
export type { XvalueSimulation, XvalueSimulationInput } from './simulationConfig.js';
export { RUBRIC_REPLIES, categoryOffset, correctProbability, languageOffset, normalFromKey, profileSeedOf, trueRates, verdictProbabilities, xvalueModelTruth } from './trueRates.js';
export type { ErrorRates, ExpectedAccuracy, VerdictProbabilities, XvalueModelTruth } from './trueRates.js';
export { xvalueSimulationTruth } from './simulationTruth.js';
export { UNREADABLE_REPLY, replyText } from './replyText.js';
export type { ReplyStyle, SimulatedAnswer } from './replyText.js';

/**
 * X-Value's simulated models: every model under test is a simulated judge (the battery has no
 * roles), configured by its `simulation:` block.
 */
export const xvalueSimulator: SimulatorFactory = (entry, ctx) =>
  new SimulatedXvalueJudge({ seed: ctx.seed, modelId: entry.id, model: entry.model, config: parseXvalueSimulation(entry.simulation, entry.where) });
