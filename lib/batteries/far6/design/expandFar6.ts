import { canonicalJson, idOfJson, uniformFromKey } from '../../../api/battery.js';
import type { GenerationSettings } from '../../../api/battery.js';
import type { AnswerConstraint, Far6Factors, Far6Item, Far6Story, Language, Proposition, QuestionForm, ReadingMap } from '../types.js';
import { conceptPairIssues } from './conceptPairs.js';
import { Far6DesignError } from './errors.js';
import { templatesFor } from './languages/registry.js';
import {
  LETTERS,
  NO_READING,
  letterReadingMap,
  letterSides,
  particleOrder,
  particleReadingMap,
  verdictReadingMap,
} from './readingMaps.js';
import type { ConceptPair, LanguageTemplates } from './types.js';

/** The FAR-6 factorial of one campaign (Same Judgment, Different Yes §3, Table 2). */
export interface Far6Design {
  readonly languages: readonly Language[];
  readonly forms: readonly QuestionForm[];
  readonly constraints: readonly AnswerConstraint[];
  /** A seeded `fraction` of the prompts gets `count` independent generations, the rest one. */
  readonly repeats: { readonly count: number; readonly fraction: number };
}

export interface ExpandFar6Args {
  readonly campaign: string;
  readonly seed: number;
  readonly phase: string;
  readonly model: { readonly id: string; readonly settings: GenerationSettings };
  readonly design: Far6Design;
  readonly stories: readonly Far6Story[];
  readonly pairs: readonly ConceptPair[];
  /**
   * Items that are only counted and priced (the plan): `item_id` and `prompt_key` are hashed on
   * first read instead of for every item (SHA-256 over ~1 KB each was 40 % of the plan's time).
   */
  readonly lazyIds?: boolean;
}

const NAMED: readonly Proposition[] = ['P', 'notP'];

/**
 * Whether a form × constraint cell runs. Same Judgment, Different Yes §3: "not every combination of form and
 * constraint is run". Every cell runs except alternative × yesno: a yes or no cannot answer
 * "wrong or right?". The alternative question still runs free, verdict-first and with labels.
 */
export function far6CellRuns(form: QuestionForm, constraint: AnswerConstraint): boolean {
  return !(form === 'alternative' && constraint === 'yesno');
}

/** Option orders shown per constraint: both particle orders, both letter orders, else one. */
export function far6OptionOrders(constraint: AnswerConstraint): number {
  return constraint === 'yesno' || constraint === 'label' ? 2 : 1;
}

/**
 * Distinct prompts (prompt_keys) per story, language and model: pairs × runnable cells × 2
 * keyings × option orders. Exact.
 */
export function far6PromptsPerStory(design: Far6Design, pairsPerLanguage: number): number {
  let cells = 0;
  for (const form of design.forms) {
    for (const constraint of design.constraints) {
      if (far6CellRuns(form, constraint)) cells += NAMED.length * far6OptionOrders(constraint);
    }
  }
  return pairsPerLanguage * cells;
}

/**
 * Items (requests) per story, language and model, for plan estimates: the exact prompt count
 * times the expected repeats, 1 + fraction × (count − 1). The realised count differs from the
 * expectation only by the seeded draw of the repeated subset.
 * @example far6ItemsPerStory({ languages: ['en'], forms: ['plain'], constraints: ['free'], repeats: { count: 3, fraction: 0.5 } }, 2) === 8
 */
export function far6ItemsPerStory(design: Far6Design, pairsPerLanguage: number): number {
  const { count, fraction } = design.repeats;
  return far6PromptsPerStory(design, pairsPerLanguage) * (1 + fraction * (count - 1));
}

/** The key of the seeded repeat draw: the seed and the model-independent prompt definition. */
export function far6RepeatKey(
  seed: number,
  f: Pick<Far6Factors, 'story' | 'concept_pair' | 'form' | 'constraint' | 'named' | 'option_order'>,
  language: Language,
): string {
  return `far6.repeat|${seed}|${language}|${f.story}|${f.concept_pair}|${f.form}|${f.constraint}|${f.named}|${f.option_order}`;
}

/** The first value that occurs twice, if any: a repeated factor level would repeat item ids. */
function firstDuplicate(values: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const v of values) {
    if (seen.has(v)) return v;
    seen.add(v);
  }
  return undefined;
}

function checkDesign(design: Far6Design, stories: readonly Far6Story[], pairs: readonly ConceptPair[]): void {
  const lists = { languages: design.languages, forms: design.forms, constraints: design.constraints, 'story ids': stories.map((s) => s.id) };
  for (const [name, values] of Object.entries(lists)) {
    const dup = firstDuplicate(values);
    if (dup !== undefined) throw new Far6DesignError(`design ${name}: "${dup}" appears twice; list each once`);
  }
  const { count, fraction } = design.repeats;
  if (!Number.isInteger(count) || count < 1) {
    throw new Far6DesignError(`repeats.count must be an integer ≥ 1, got ${count}`);
  }
  if (!(fraction >= 0 && fraction <= 1)) {
    throw new Far6DesignError(`repeats.fraction must lie in [0, 1], got ${fraction}`);
  }
  const problems: string[] = [];
  const ids = new Set<string>();
  pairs.forEach((pair, i) => {
    if (ids.has(pair.id)) problems.push(`pairs[${i}].id: duplicate id "${pair.id}"`);
    ids.add(pair.id);
    for (const issue of conceptPairIssues(pair, `pairs[${i}]`)) problems.push(`${issue.path}: ${issue.message}`);
  });
  for (const language of design.languages) {
    if (!pairs.some((p) => p.language === language)) {
      problems.push(`no concept pair for language "${language}"; every design language needs at least one`);
    }
  }
  if (problems.length > 0) throw new Far6DesignError(`FAR-6 design is inconsistent:\n${problems.join('\n')}`);
}

/**
 * The canonical JSON of a prompt's identity object around its `repeat` factor (which sorts between
 * option_order and story): the item id hashes head + repeat + tail, the prompt key head + tail.
 */
interface PromptJson {
  readonly head: string;
  readonly tail: string;
  key?: string;
}

// stableId of the identity object, hashed from its canonical JSON as assembled (core/hash idOfJson).
const itemIdOf = (p: PromptJson, repeat: number): string => idOfJson(`${p.head},"repeat":${repeat}${p.tail}`);
const promptKeyOf = (p: PromptJson): string => idOfJson(`${p.head}${p.tail}`);

/**
 * An item of the plan (ExpandFar6Args.lazyIds): its ids are hashed on first read, from its
 * prompt's identity JSON (a rope of pieces shared by the prompt's repeats until then). Getters on
 * the class, not closures per item: those made the plan slower than hashing every id (6.5 -> 9 s
 * at full size, the garbage they left). The plan reads its items in place; a spread copy would
 * not have the ids (they are not own properties), which is why only the plan gets these.
 */
class PlanningItem implements Far6Item {
  readonly battery = 'far6';
  readonly #prompt: PromptJson;
  #id?: string;

  constructor(
    readonly campaign: string,
    readonly phase: string,
    readonly model: string,
    readonly language: Language,
    readonly factors: Far6Factors,
    readonly messages: Far6Item['messages'],
    readonly settings: GenerationSettings,
    readonly extras: Far6Item['extras'],
    prompt: PromptJson,
  ) {
    this.#prompt = prompt;
  }

  get item_id(): string {
    return (this.#id ??= itemIdOf(this.#prompt, this.factors.repeat));
  }

  get prompt_key(): string {
    return (this.#prompt.key ??= promptKeyOf(this.#prompt));
  }
}

/** Per language: instructions and reading maps that do not depend on the story. */
interface LanguageFixtures {
  readonly tpl: LanguageTemplates;
  /** [constraint][order] → instruction text. */
  readonly instruction: Record<AnswerConstraint, readonly string[]>;
  /** [named][order] particle maps. */
  readonly particleMaps: Record<Proposition, readonly ReadingMap[]>;
}

function languageFixtures(language: Language): LanguageFixtures {
  const tpl = templatesFor(language);
  return {
    tpl,
    instruction: {
      free: [tpl.instructions.free],
      verdict: [tpl.instructions.verdict],
      yesno: [0, 1].map((o) => tpl.instructions.yesno(particleOrder(tpl, o))),
      label: [tpl.instructions.label, tpl.instructions.label],
    },
    particleMaps: {
      P: [0, 1].map((o) => deepFreeze(particleReadingMap(tpl, 'P', o))),
      notP: [0, 1].map((o) => deepFreeze(particleReadingMap(tpl, 'notP', o))),
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

const LETTER_MAPS = [deepFreeze(letterReadingMap(0)), deepFreeze(letterReadingMap(1))] as const;

/**
 * Expands the FAR-6 factorial for one model into prompt items (Same Judgment, Different Yes §3, "Stories and
 * prompts", "Answer instructions"), in a stable order: language × story (with a rendering in
 * that language) × concept pair of the language × form × named term (P, notP; for the
 * alternative question, the term listed first) × constraint (all but alternative × yesno) ×
 * option order (yesno: yes-first, no-first; label: P as A, notP as A; else 0) × repeat.
 *
 * `item_id` is the stable id of everything that defines the request (campaign, phase, battery,
 * model, language, factors with repeat, messages, settings); `prompt_key` the same without the
 * repeat. The repeated subset is drawn from the seed and the prompt's definition only, so every
 * model gets the same one. Output is identical byte for byte for identical input.
 * @example for (const item of expandFar6({ campaign: 'demo', seed: 7, phase: 'generate', model, design, stories, pairs })) write(item);
 */
export function* expandFar6(args: ExpandFar6Args): Generator<Far6Item> {
  const { campaign, seed, phase, model, design, stories, pairs, lazyIds = false } = args;
  checkDesign(design, stories, pairs);
  const { count: repeatCount, fraction: repeatFraction } = design.repeats;
  const settings = model.settings;

  // The canonical JSON of the identity object is assembled from pieces: the same bytes as
  // canonicalJson({ battery, campaign, factors, language, messages, model, phase, settings })
  // (keys in sorted order), without re-serialising the constant parts for every item.
  const jsonHead = `{"battery":"far6","campaign":${JSON.stringify(campaign)},"factors":{`;
  const jsonModelTail = `,"model":${JSON.stringify(model.id)},"phase":${JSON.stringify(phase)},"settings":${canonicalJson(settings)}}`;

  for (const language of design.languages) {
    const fx = languageFixtures(language);
    const { tpl } = fx;
    const langPairs = pairs.filter((p) => p.language === language);
    const verdictMaps = new Map(langPairs.map((p) => [p.id, deepFreeze(verdictReadingMap(p))]));
    const jsonLanguage = `},"language":${JSON.stringify(language)},"messages":[{"content":`;

    for (const story of stories) {
      const rendering = story.renderings[language];
      if (!rendering) continue;
      const { text, agent } = rendering;
      const jsonStoryTail = `,"story":${JSON.stringify(story.id)},"story_group":${JSON.stringify(story.group)}`;

      for (const pair of langPairs) {
        const ctpl = tpl.constructions[pair.construction];
        const terms = { P: pair.reference.forms, notP: pair.counterpart.forms };
        const propositions = Object.freeze({ P: ctpl.proposition(terms.P, agent), notP: ctpl.proposition(terms.notP, agent) });
        const options = [0, 1].map((o) =>
          letterSides(o)
            .map((side, i) => tpl.optionLine(LETTERS[i]!, propositions[side]))
            .join('\n'),
        );
        const jsonPairHead = `"concept_pair":${JSON.stringify(pair.id)},"constraint":`;
        const jsonConstruction = `,"construction":${JSON.stringify(pair.construction)},"form":`;
        const verdictMap = verdictMaps.get(pair.id)!;

        for (const form of design.forms) {
          for (const named of NAMED) {
            const other = named === 'P' ? 'notP' : 'P';
            const question =
              form === 'alternative'
                ? ctpl.alternative(terms[named], terms[other], agent)
                : ctpl[form](terms[named], agent);
            const lead = `${text}\n\n${question}\n`;
            // JSON of lead + tail = JSON(lead) without its closing quote + JSON(tail) without its
            // opening one: escaping is per character and the split falls after a newline.
            const leadJson = JSON.stringify(lead).slice(0, -1);

            for (const constraint of design.constraints) {
              if (!far6CellRuns(form, constraint)) continue;
              const orders = far6OptionOrders(constraint);
              for (let order = 0; order < orders; order++) {
                const instruction = fx.instruction[constraint][order]!;
                const tail = constraint === 'label' ? `${options[order]}\n${instruction}` : instruction;
                const content = lead + tail;
                const reading_map =
                  constraint === 'yesno'
                    ? fx.particleMaps[named][order]!
                    : constraint === 'verdict'
                      ? verdictMap
                      : constraint === 'label'
                        ? LETTER_MAPS[order as 0 | 1]
                        : NO_READING;

                const factorsHead =
                  `${jsonPairHead}${JSON.stringify(constraint)}${jsonConstruction}${JSON.stringify(form)}` +
                  `,"named":${JSON.stringify(named)},"option_order":${order}`;
                const jsonRest = `${jsonLanguage}${leadJson}${JSON.stringify(tail).slice(1)},"role":"user"}]${jsonModelTail}`;
                // The identity JSON before and after the repeat; the prompt key is hashed once for the repeats.
                const prompt: PromptJson = { head: `${jsonHead}${factorsHead}`, tail: `${jsonStoryTail}${jsonRest}` };
                if (!lazyIds) prompt.key = promptKeyOf(prompt);

                let n = 1;
                if (repeatCount > 1 && repeatFraction > 0) {
                  const key = far6RepeatKey(seed, { story: story.id, concept_pair: pair.id, form, constraint, named, option_order: order }, language);
                  if (uniformFromKey(key) < repeatFraction) n = repeatCount;
                }
                // Frozen: shared by the prompt's repeats, and its token estimate is kept (pricing.ts).
                const messages = Object.freeze([Object.freeze({ role: 'user' as const, content })]);
                // Shared by the prompt's repeats.
                const extras = { reading_map, propositions };
                for (let repeat = 0; repeat < n; repeat++) {
                  const factors = {
                    story: story.id,
                    story_group: story.group,
                    concept_pair: pair.id,
                    form,
                    constraint,
                    named,
                    option_order: order,
                    repeat,
                    construction: pair.construction,
                  };
                  if (lazyIds) {
                    yield new PlanningItem(campaign, phase, model.id, language, factors, messages, settings, extras, prompt);
                    continue;
                  }
                  yield {
                    item_id: itemIdOf(prompt, repeat),
                    prompt_key: prompt.key!,
                    campaign,
                    phase,
                    battery: 'far6',
                    model: model.id,
                    language,
                    factors,
                    messages,
                    settings,
                    extras,
                  };
                }
              }
            }
          }
        }
      }
    }
  }
}
