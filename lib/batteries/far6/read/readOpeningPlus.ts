import { LANGUAGES } from '../types.js';
import type { Language, Proposition, ReadingMap } from '../types.js';
import { PrefixMatcher, charAt, fold, foldTokens, foldedOpening, isWordChar, needsBoundary } from './normalize.js';
import { PLUS_TABLES, type PlusLanguageTable } from './plusTables.js';
import { readOpening, ruleMatcher } from './readOpening.js';
import {
  PLUS_EXTENSIONS,
  type MatchEntry,
  type PlusExtension,
  type PlusReading,
  type ReadPlusOptions,
  type RuleReading,
} from './types.js';

/**
 * R+ (Same Judgment, Different Yes §3: "The verdict word is read by a fixed rule extended in four stated ways
 * (Appendix A11; the figures label the rules R and R+)"). The paper does not reproduce A11; these
 * are sondage's four extensions, each switchable (README "R+"):
 *
 * 1. negation — a negated verdict flips its side: "Not wrong", "nicht falsch", "不是错的",
 *    "間違っていない", "잘못이 아닙니다", "Falsch war es nicht.", "un-acceptable".
 * 2. hedge — leading discourse, hedge and degree markers are skipped: "Well,", "Honestly,",
 *    "I think", "Morally", "我认为", "Ich finde".
 * 3. variant — inflected and variant forms of the map's verdicts: "wrongly", "falsche", 错/错误.
 * 4. copula — the verdict right after a copula within the first sentence's first 5 tokens (16
 *    characters for unspaced zh/ja text): "It was wrong.", "这样做是错的", "行動は悪い".
 *
 * Particle and letter maps are read by R unchanged; R+ only differs on verdict maps.
 */

interface PlusEntry extends MatchEntry {
  readonly via: readonly PlusExtension[];
}

interface HedgeEntry {
  readonly key: string;
  readonly boundary: boolean;
  readonly negates: boolean;
}

interface CopulaSet {
  readonly mode: 'token' | 'char';
  readonly words: ReadonlySet<string>;
  readonly endings: readonly string[];
  readonly negated: ReadonlySet<string>;
  /** char mode: copulas as one matcher (negated ones flagged). */
  readonly matcher: PrefixMatcher<HedgeEntry>;
  readonly conditionals: readonly string[];
}

interface PlusMatcher {
  readonly on: Readonly<Record<PlusExtension, boolean>>;
  readonly verdicts: PrefixMatcher<PlusEntry>;
  readonly negators: PrefixMatcher<HedgeEntry>;
  readonly hedges: PrefixMatcher<HedgeEntry>;
  readonly trailingEnd: readonly string[];
  readonly trailingInside: readonly string[];
  readonly copulas: readonly CopulaSet[];
}

const HEAD_LENGTH = 512;
const MAX_HEDGES = 4;
const COPULA_TOKENS = 5;
const COPULA_CHARS = 16;
const SENTENCE_END = /[.!?。！？;；]/u;
const CLAUSE_END = /[,，、.!?。！？;；:：]/u;
const AFTER_HEDGE = /^[ ,，、:：;；.…!！—–-]*/u;
const TRAILING_PUNCT = /[,，、:：;；"'”»)\]]+$/u;

const cache = new WeakMap<ReadingMap, Map<string, PlusMatcher>>();

const flip = (side: Proposition): Proposition => (side === 'P' ? 'notP' : 'P');

function switches(options: ReadPlusOptions): Record<PlusExtension, boolean> {
  const on = {} as Record<PlusExtension, boolean>;
  for (const ext of PLUS_EXTENSIONS) on[ext] = options.extensions?.[ext] !== false;
  return on;
}

function hedgeEntries(keys: Iterable<string>, negates: boolean): HedgeEntry[] {
  return [...keys].map((k) => ({ key: fold(k), boundary: needsBoundary(fold(k)), negates }));
}

/**
 * Expands the map's verdicts into every form R+ reads. The map's own keys always win; a generated
 * form that two verdicts would claim for opposite sides is dropped rather than guessed.
 */
function expandVerdicts(
  map: ReadingMap,
  tables: readonly PlusLanguageTable[],
  on: Readonly<Record<PlusExtension, boolean>>,
): PlusEntry[] {
  const base = foldTokens(map.tokens, 'reading map (kind verdict)');
  const out = new Map<string, PlusEntry>();
  for (const e of base.values()) out.set(e.key, { ...e, via: [] });
  const generated = new Map<string, PlusEntry | null>();
  const add = (key: string, side: Proposition, via: readonly PlusExtension[]): void => {
    if (key === '' || out.has(key)) return;
    const seen = generated.get(key);
    if (seen === undefined) generated.set(key, { key, side, boundary: needsBoundary(key), via });
    else if (seen !== null && seen.side !== side) generated.set(key, null);
  };

  const forms: PlusEntry[] = [...out.values()];
  if (on.variant) {
    for (const t of tables) {
      for (const e of out.values()) {
        for (const group of t.variants) {
          if (group.includes(e.key)) for (const v of group) add(fold(v), e.side, ['variant']);
        }
      }
    }
    for (const t of tables) {
      for (const e of out.values()) {
        if (!e.boundary) continue; // unspaced verdicts already match their inflected forms as prefixes
        for (const suf of t.suffixes) add(e.key + suf, e.side, ['variant']);
        for (const [from, tos] of t.stems) {
          if (e.key.endsWith(from)) for (const to of tos) add(e.key.slice(0, -from.length) + to, e.side, ['variant']);
        }
      }
    }
    for (const g of generated.values()) if (g) forms.push(g);
  }
  if (on.negation) {
    for (const t of tables) {
      for (const f of forms) {
        const via: PlusExtension[] = [...f.via, 'negation'];
        for (const pre of t.negPrefixes) add(fold(pre) + f.key, flip(f.side), via);
        for (const suf of t.negSuffixes) add(f.key + suf, flip(f.side), via);
        for (const [from, tos] of t.negStems) {
          if (f.key.endsWith(from)) for (const to of tos) add(f.key.slice(0, -from.length) + to, flip(f.side), via);
        }
      }
    }
  }
  for (const g of generated.values()) if (g && !out.has(g.key)) out.set(g.key, g);
  return [...out.values()];
}

function buildPlusMatcher(map: ReadingMap, options: ReadPlusOptions): PlusMatcher {
  const on = switches(options);
  const languages: readonly Language[] = options.language ? [options.language] : LANGUAGES;
  const tables = languages.map((l) => PLUS_TABLES[l]);
  const verdicts = new PrefixMatcher(expandVerdicts(map, tables, on));
  const negators = new PrefixMatcher(on.negation ? hedgeEntries(tables.flatMap((t) => t.negators), true) : []);
  const hedgeList = on.hedge ? hedgeEntries(tables.flatMap((t) => t.hedges), false) : [];
  if (on.hedge && on.negation) hedgeList.push(...hedgeEntries(tables.flatMap((t) => t.negHedges), true));
  const copulas: CopulaSet[] = on.copula
    ? tables.map((t) => ({
        mode: t.copula.mode,
        words: new Set(t.copula.words),
        endings: t.copula.endings,
        negated: new Set(t.copula.negated),
        matcher: new PrefixMatcher([
          ...hedgeEntries(t.copula.words, false),
          ...hedgeEntries(t.copula.negated, true),
        ]),
        conditionals: t.copula.conditionals,
      }))
    : [];
  return {
    on,
    verdicts,
    negators,
    hedges: new PrefixMatcher(hedgeList),
    trailingEnd: on.negation ? tables.flatMap((t) => t.trailingNeg.end) : [],
    trailingInside: on.negation ? tables.flatMap((t) => t.trailingNeg.inside) : [],
    copulas,
  };
}

function plusMatcher(map: ReadingMap, options: ReadPlusOptions): PlusMatcher {
  let perMap = cache.get(map);
  if (!perMap) {
    perMap = new Map();
    cache.set(map, perMap);
  }
  const on = switches(options);
  const key = `${options.language ?? '*'}|${PLUS_EXTENSIONS.map((e) => (on[e] ? 1 : 0)).join('')}`;
  let m = perMap.get(key);
  if (!m) {
    m = buildPlusMatcher(map, options);
    perMap.set(key, m);
  }
  return m;
}

interface Hit {
  readonly side: Proposition;
  readonly end: number;
  readonly via: ReadonlySet<PlusExtension>;
}

const withVia = (hit: Hit, ...more: PlusExtension[]): Hit => ({ ...hit, via: new Set([...hit.via, ...more]) });

function skipSpace(s: string, pos: number): number {
  return s[pos] === ' ' ? pos + 1 : pos;
}

/** After a hedge: separators ("Well, ", "Honestly — ", "我认为，"). */
function skipAfterHedge(s: string, pos: number): number {
  const m = AFTER_HEDGE.exec(s.slice(pos, pos + 8));
  return pos + (m ? m[0].length : 0);
}

/** A verdict at `pos`: directly, after a negator (1), or after hedges (2). */
function verdictAt(m: PlusMatcher, s: string, pos: number, allowNeg: boolean, hedges: number): Hit | undefined {
  const e = m.verdicts.match(s, pos);
  if (e) return { side: e.side, end: pos + e.key.length, via: new Set(e.via) };
  if (allowNeg) {
    const n = m.negators.match(s, pos);
    if (n) {
      const inner = verdictAt(m, s, skipSpace(s, pos + n.key.length), false, hedges);
      if (inner) return withVia({ ...inner, side: flip(inner.side) }, 'negation');
    }
  }
  if (hedges < MAX_HEDGES) {
    const h = m.hedges.match(s, pos);
    if (h && (allowNeg || !h.negates)) {
      const inner = verdictAt(m, s, skipAfterHedge(s, pos + h.key.length), allowNeg && !h.negates, hedges + 1);
      if (inner) {
        const hit = withVia(inner, 'hedge');
        return h.negates ? withVia({ ...hit, side: flip(hit.side) }, 'negation') : hit;
      }
    }
  }
  return undefined;
}

/** Where the body starts once leading hedges are skipped (for the copula scan). */
function bodyStart(m: PlusMatcher, s: string): { pos: number; negated: boolean } {
  let pos = 0;
  let negated = false;
  for (let i = 0; i < MAX_HEDGES; i++) {
    const h = m.hedges.match(s, pos);
    if (!h) break;
    negated = negated !== h.negates;
    pos = skipAfterHedge(s, pos + h.key.length);
  }
  return { pos, negated };
}

/** (1) Negation after the verdict in its own clause: "Falsch war es nicht.", "悪いとは思いません". */
function trailingNegation(m: PlusMatcher, s: string, end: number): number | undefined {
  if (m.trailingEnd.length === 0 && m.trailingInside.length === 0) return undefined;
  const rest = s.slice(end);
  const cut = rest.search(CLAUSE_END);
  const clause = cut === -1 ? rest : rest.slice(0, cut);
  const clauseEnd = end + clause.length;
  for (const neg of m.trailingInside) {
    const at = clause.indexOf(neg);
    // ja "悪いのではないでしょうか" is a rhetorical question asserting the verdict, not negating it.
    if (at >= 0 && !/^(?:か|でしょうか|ですか)/u.test(clause.slice(at + neg.length))) return clauseEnd;
  }
  const tail = clause.trimEnd();
  for (const neg of m.trailingEnd) {
    if (tail === neg || tail.endsWith(` ${neg}`)) return clauseEnd;
  }
  return undefined;
}

function firstSentence(s: string, from: number): string {
  const rest = s.slice(from);
  const cut = rest.search(SENTENCE_END);
  return cut === -1 ? rest : rest.slice(0, cut);
}

/** (4) A verdict after a copula early in the first sentence: "It was wrong.", "这样做是错的". */
function copulaHit(m: PlusMatcher, s: string, from: number): Hit | undefined {
  const sentence = firstSentence(s, from);
  for (const c of m.copulas) {
    const conditional = (w: string): boolean =>
      sentence.startsWith(w) && !(needsBoundary(w) && isWordChar(charAt(sentence, w.length)));
    if (c.conditionals.some(conditional)) continue;
    if (c.mode === 'char') {
      const window = Math.min(sentence.length, COPULA_CHARS);
      for (let i = 0; i < window; i++) {
        const cop = c.matcher.match(sentence, i);
        if (!cop || (cop.negates && !m.on.negation)) continue;
        const at = from + skipSpace(sentence, i + cop.key.length);
        if (at - from > window) break;
        const v = verdictAt(m, s, at, m.on.negation, 0);
        if (v) return withVia(cop.negates ? withVia({ ...v, side: flip(v.side) }, 'negation') : v, 'copula');
      }
      continue;
    }
    const tokens = [...sentence.matchAll(/\S+/gu)].slice(0, COPULA_TOKENS);
    for (let k = 0; k + 1 < tokens.length; k++) {
      const tok = (tokens[k]?.[0] ?? '').replace(TRAILING_PUNCT, '');
      const negated = c.negated.has(tok);
      const copula = negated || c.words.has(tok) || c.endings.some((e) => tok.length > e.length && tok.endsWith(e));
      if (!copula || (negated && !m.on.negation)) continue;
      const at = from + (tokens[k + 1]?.index ?? 0);
      const v = verdictAt(m, s, at, m.on.negation, 0);
      if (v) return withVia(negated ? withVia({ ...v, side: flip(v.side) }, 'negation') : v, 'copula');
    }
  }
  return undefined;
}

/**
 * R+ with the extensions that decided the reading (`via`, empty when R alone reads the same).
 * @example explainOpeningPlus('Not wrong at all.', enVerdictMap, 'en') // { label: 'notP', raw: 'not wrong', via: ['negation'] }
 */
export function explainOpeningPlus(
  text: string,
  map: ReadingMap,
  languageOrOptions: Language | ReadPlusOptions = {},
): PlusReading {
  if (map.kind !== 'verdict') return { ...readOpening(text, map), via: [] };
  ruleMatcher(map); // validates the map with R's checks and messages
  const options: ReadPlusOptions =
    typeof languageOrOptions === 'string' ? { language: languageOrOptions } : languageOrOptions;
  const m = plusMatcher(map, options);
  const s = foldedOpening(text, HEAD_LENGTH);
  if (s === '') return { label: 'invalid', raw: null, via: [] };

  let hit = verdictAt(m, s, 0, m.on.negation, m.on.hedge ? 0 : MAX_HEDGES);
  if (!hit && m.on.copula) {
    const body = m.on.hedge ? bodyStart(m, s) : { pos: 0, negated: false };
    if (!body.negated || m.on.negation) {
      const c = copulaHit(m, s, body.pos);
      if (c) {
        hit = body.pos > 0 ? withVia(c, 'hedge') : c;
        if (body.negated) hit = withVia({ ...hit, side: flip(hit.side) }, 'negation');
      }
    }
  }
  if (!hit) return { label: 'invalid', raw: null, via: [] };
  if (m.on.negation) {
    const negEnd = trailingNegation(m, s, hit.end);
    if (negEnd !== undefined) hit = withVia({ side: flip(hit.side), end: negEnd, via: hit.via }, 'negation');
  }
  return {
    label: hit.side,
    raw: s.slice(0, hit.end).trimEnd(),
    via: PLUS_EXTENSIONS.filter((e) => hit.via.has(e)),
  };
}

/**
 * R+: the fixed verdict rule extended in four switchable ways (negation, hedge, variant, copula;
 * see `explainOpeningPlus` and lib/read/README.md). Pass the item's language to use only its
 * tables. Particle and letter maps read exactly as `readOpening`.
 * @example readOpeningPlus('Honestly, it was not wrong.', map, 'en') // { label: 'notP', raw: 'honestly, it was not wrong' }
 */
export function readOpeningPlus(
  text: string,
  map: ReadingMap,
  languageOrOptions: Language | ReadPlusOptions = {},
): RuleReading {
  const { label, raw } = explainOpeningPlus(text, map, languageOrOptions);
  return { label, raw };
}
