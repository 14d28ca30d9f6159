/**
 * Chat messages whose content is a template filled with values, kept as its pieces.
 *
 * Why: a filled template is built by concatenation, which V8 keeps as a tree of the pieces, so a
 * partition's prompts share their template's text instead of each holding a copy. Serializing such
 * a string (an item id, a prompts row) or scanning it (the token estimate and bound) flattens it
 * in place: from then on every live item holds a copy of its whole prompt. X-Value's rubric
 * prompts are ~3.6 KB and a partition thread holds ~10,000 items at a time: 34 MB of copies,
 * which the garbage collector moved again at every scavenge they lived through. A message made here
 * is known as its pieces: its JSON (lib/core/hash.ts) and its token counts (lib/pricing) are put
 * together from them, each literal of the template escaped and counted once for all the prompts
 * that use it, and the content itself is left as the tree it was built as.
 *
 * The pieces give exactly what the whole text gives: a message whose pieces could join otherwise
 * (a piece that ends in a high surrogate or begins with a low one) is made the same,
 * but not kept as pieces, and is serialized and counted whole.
 */
import type { ChatMessage } from './types.js';

/**
 * A template's literals and the values put between them: the content is `literals[0] + values[0] +
 * literals[1] + … + literals[n]`. One `literals` array serves every prompt of its template: what
 * is worked out from it is kept per array.
 */
export interface FilledText {
  readonly literals: readonly string[];
  readonly values: readonly string[];
}

/**
 * A message made by filledMessage. Its pieces are private fields, not a WeakMap's entries: a
 * million prompts made a million entries, which cost more than the prompts' JSON saved. Frozen, so
 * that its content cannot be changed away from its pieces; a copy (a spread, a structured clone)
 * is a plain message, serialized and counted whole.
 */
class FilledMessage implements ChatMessage {
  readonly #filled: FilledText | undefined;

  constructor(
    readonly role: ChatMessage['role'],
    readonly content: string,
    filled: FilledText | undefined,
  ) {
    this.#filled = filled;
    Object.freeze(this);
  }

  static filledTextOf(message: object): FilledText | undefined {
    return #filled in message ? (message as FilledMessage).#filled : undefined;
  }
}

/**
 * A frozen message whose content is `literals` filled with `values` (one fewer than the literals).
 * @example filledMessage('user', ['Q: ', '\nA: ', ''], ['Why?', 'Because.']).content === 'Q: Why?\nA: Because.'
 */
export function filledMessage(role: ChatMessage['role'], literals: readonly string[], values: readonly string[]): ChatMessage {
  if (values.length !== literals.length - 1) throw new Error(`filledMessage: ${literals.length} literals take ${literals.length - 1} values, got ${values.length}`);
  let content = literals[0] as string;
  for (let i = 0; i < values.length; i++) content += (values[i] as string) + (literals[i + 1] as string);
  return new FilledMessage(role, content, joinsCleanly(literals, values) ? { literals, values } : undefined);
}

/**
 * `compute` over a template's literals, kept per literals array: what the JSON and the counts of
 * filled messages take from their template is worked out once for all its prompts.
 */
export function perTemplate<T>(compute: (literals: readonly string[]) => T): (literals: readonly string[]) => T {
  const kept = new WeakMap<readonly string[], T>();
  return (literals) => {
    let value = kept.get(literals);
    if (value === undefined) {
      value = compute(literals);
      kept.set(literals, value);
    }
    return value;
  };
}

/** The pieces of a message made by filledMessage; undefined for any other message. */
export function filledTextOf(message: object): FilledText | undefined {
  return FilledMessage.filledTextOf(message);
}

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

/**
 * Whether no two pieces could join into one character: no piece ends in a high surrogate and none
 * begins with a low one. Then JSON.stringify, UTF-8 and the token estimate of the whole text are
 * those of its pieces, one after the other (a lone surrogate is escaped, encoded and counted alike
 * alone or in the whole).
 */
function joinsCleanly(literals: readonly string[], values: readonly string[]): boolean {
  for (let i = 0; i < literals.length; i++) {
    if (!pieceStandsAlone(literals[i] as string)) return false;
    if (i < values.length && !pieceStandsAlone(values[i] as string)) return false;
  }
  return true;
}

function pieceStandsAlone(piece: string): boolean {
  return piece.length === 0 || (!isLowSurrogate(piece.charCodeAt(0)) && !isHighSurrogate(piece.charCodeAt(piece.length - 1)));
}
