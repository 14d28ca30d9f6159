import type { Language, StoryGroup } from '../types.js';
import type { SimulationConfig } from './simulationConfig.js';

/** The answer habits of one model × language cell (Same Judgment, Different Yes §6, §7). */
export interface CellHabits {
  /** β: added to the probability of taking the named side in yes/no questions; negative prefers no. */
  readonly keying_bias: number;
  /** λ: added to the probability of P when P is listed second, subtracted when it is listed first. */
  readonly second_listed: number;
  /** ν: added to the probability of P when the question names P's term, subtracted otherwise. */
  readonly named_term_pull: number;
  /** m: probability that a negative-interrogative particle follows the truth/agreement mapping. */
  readonly negint_truth_mapping: number;
  readonly undecided_rate: number;
  readonly refusal_rate: number;
}

/** The true parameters of one model × language cell, and what they imply for the estimators. */
export interface SimulationCellTruth extends CellHabits {
  readonly model: string;
  readonly language: Language;
  /** π per story id: probability of asserting the reference proposition P. */
  readonly pi: Readonly<Record<string, number>>;
  /**
   * The cell's true yes/no keying bias under plain questions, read by stance or by the fixed token
   * rule (they coincide there): mean over stories of [clamp(π+β) − (1 − clamp(1−π+β))]/2.
   */
  readonly expected_b: number;
  /** The same b read by the fixed token rule after a negative interrogative (it changes sign in truth-mapping cells). */
  readonly expected_b_negint_token: number;
  /** Second-listed preference of label choices: mean of Pr(second-listed) − ½ over stories and keyings. */
  readonly expected_second_listed: number;
  /** Named-term pull of label choices: mean of [Pr(P | named P) − Pr(P | named notP)]/2 over stories and orders. */
  readonly expected_named_term_pull: number;
  /** m ≥ 0.5: the cell answers negative interrogatives mostly by truth/agreement. */
  readonly truth_mapping: boolean;
}

/** Everything a simulated model was drawn from, written beside the results (labelled simulated). */
export interface SimulationTruth {
  readonly simulated: true;
  readonly seed: number;
  readonly model: string;
  readonly profile_seed: number;
  /** The configuration after defaults. */
  readonly config: SimulationConfig;
  readonly stories: readonly { readonly id: string; readonly group: StoryGroup }[];
  readonly cells: readonly SimulationCellTruth[];
}
