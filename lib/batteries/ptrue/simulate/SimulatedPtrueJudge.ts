/**
 * The simulated judge role (§4.2): it finds the response in the judge prompt, grades it against the
 * item's accepted answers (short answer) or gold option (multiple choice), and writes feedback and
 * `[RESULT] n` — with a known share of flipped verdicts and of malformed outputs.
 */
import { SimulatedRequestError, uniformFromKey } from '../../../api/battery.js';
import type { PromptItem, SimulatedModel, SimulatedReply } from '../../../api/battery.js';
import { extractOption } from '../read/options.js';
import { PHASES, type PtrueItem } from '../types.js';
import type { PtrueJudgeSimulation } from './config.js';
import { mentionsAny } from './phrases.js';

const RESPONSE = /###Response to evaluate:\n([\s\S]*?)\n\n###/;

export class SimulatedPtrueJudge implements SimulatedModel {
  readonly effectsKey: string;
  readonly errorRate: number;
  readonly latencyMs: number;

  constructor(
    private readonly seed: number,
    private readonly id: string,
    private readonly cfg: PtrueJudgeSimulation,
  ) {
    this.effectsKey = `ptrue-judge|${seed}|${id}`;
    this.errorRate = cfg.transient_error_rate;
    this.latencyMs = cfg.latency_ms;
  }

  /** Whether the response in a judge item is right, as an error-free judge would say. */
  static grade(item: PtrueItem): boolean {
    const content = item.messages.map((m) => m.content).join('\n');
    const response = RESPONSE.exec(content)?.[1] ?? content;
    if (item.factors.kind === 'multiple_choice') return extractOption(response, item.extras.option_count ?? 4).letter === item.extras.gold_letter;
    return mentionsAny(response, [...Object.values(item.extras.answers), ...item.extras.aliases]);
  }

  reply(item: PromptItem): SimulatedReply {
    const p = item as PtrueItem;
    if (p.phase !== PHASES.judge) throw new SimulatedRequestError(`simulated/${this.id}: the judge answers judge items, not ${p.phase}`, this.id);
    const u = (what: string): number => uniformFromKey(`ptrue-judge|${this.seed}|${this.id}|${p.item_id}|${what}`);
    if (u('malformed') < this.cfg.malformed_rate) return { text: 'Feedback: The response could not be assessed against the reference.' };
    const flipped = u('flip') < this.cfg.error_rate;
    const right = flipped ? !SimulatedPtrueJudge.grade(p) : SimulatedPtrueJudge.grade(p);
    const s = u('score');
    const score = right ? (s < 0.7 ? 5 : 4) : s < 0.6 ? 1 : s < 0.9 ? 2 : 3;
    const feedback = right ? 'The response gives the reference answer.' : 'The response does not give the reference answer.';
    return { text: `Feedback: ${feedback} [RESULT] ${score}` };
  }
}
