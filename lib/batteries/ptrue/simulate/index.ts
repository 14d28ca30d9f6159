import type { SimulatorFactory } from '../../../api/battery.js';
import { parsePtrueJudgeSimulation, parsePtrueSimulation } from './config.js';
import { SimulatedPtrueJudge } from './SimulatedPtrueJudge.js';
import { SimulatedPtrueRespondent } from './SimulatedPtrueRespondent.js';

export { ptrueSimulationSchema, ptrueJudgeSimulationSchema, parsePtrueSimulation, parsePtrueJudgeSimulation } from './config.js';
export type { PtrueSimulation, PtrueJudgeSimulation } from './config.js';
export { SimulatedPtrueRespondent, sideLogprobs } from './SimulatedPtrueRespondent.js';
export { SimulatedPtrueJudge } from './SimulatedPtrueJudge.js';
export { replyTruth, correctProbability, kappaFor, ptrueLogit, itemShift } from './draws.js';
export type { ReplyKey, ReplyTruth } from './draws.js';
export { confidenceTruth, cellTruth, modelTruth, readAuroc } from './truth.js';
export type { ConfidenceTruth, CellTruth, JudgeTruth } from './truth.js';
export { normalCdf } from './normal.js';

/** P(True)'s simulated models: the judge role gets the simulated judge, models under test the respondent. */
export const ptrueSimulator: SimulatorFactory = (entry, ctx) => {
  if (entry.role === 'judge') return new SimulatedPtrueJudge(ctx.seed, entry.id, parsePtrueJudgeSimulation(entry.simulation, entry.where));
  return new SimulatedPtrueRespondent({ seed: ctx.seed, modelId: entry.id, config: parsePtrueSimulation(entry.simulation, entry.where) });
};
