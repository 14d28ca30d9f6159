import type { Language } from '../types.js';

/**
 * The word lists behind R+ (Same Judgment, Different Yes §3: "The verdict word is read by a fixed rule extended in four
 * stated ways (Appendix A11)"). The paper does not reproduce A11, so these lists are sondage's
 * statement of the four extensions; lib/read/README.md explains each. All entries are written
 * folded (NFKC, lower case, `'` for apostrophes, single spaces), as `fold` leaves replies.
 *
 * The tables are deliberately short and conservative: an entry that could open a reply with the
 * opposite meaning is left out (zh 对 and ko 맞 double as "yes, right"; ja いい starts いいえ; fr bon
 * is also "well,"), because a wrong decisive reading costs more than an `invalid` one.
 */
export interface PlusLanguageTable {
  /** (1) Negators read before a verdict: "not wrong", "nicht falsch", "不是错的", "pas mal". */
  readonly negators: readonly string[];
  /** (1) Morphological negation glued to a verdict: un-acceptable, in-correct, nicht-… */
  readonly negPrefixes: readonly string[];
  /** (1) Negated forms after a verdict (ja, ko): 反対ではない, 잘못이 아닙니다. */
  readonly negSuffixes: readonly string[];
  /** (1) Same, replacing a final stem: 悪い → 悪くない, 옳다 → 옳지 않. */
  readonly negStems: readonly (readonly [string, readonly string[]])[];
  /**
   * (1) Negation placed after the verdict in its clause (de V2 "Falsch war es nicht.", "Ich lehne
   * das nicht ab."; ja/ko quotative "悪いとは思いません", "잘못이라고 생각하지 않습니다").
   * `end`: must close the clause; `inside`: anywhere in the clause after the verdict.
   */
  readonly trailingNeg: { readonly end: readonly string[]; readonly inside: readonly string[] };
  /** (2) Discourse, hedge and degree markers skipped before a verdict ("Well,", "I think", 我认为). */
  readonly hedges: readonly string[];
  /** (1)+(2) Hedges that negate what follows ("I don't think", 我不认为, je ne pense pas que). */
  readonly negHedges: readonly string[];
  /** (3) Inflection suffixes for spaced-script verdicts: wrong-ly, falsch-e, mauvais-e. */
  readonly suffixes: readonly string[];
  /** (3) Inflection replacing a final stem: accept-able → accept-ably. */
  readonly stems: readonly (readonly [string, readonly string[]])[];
  /** (3) Variant forms of one verdict: 错误/错, 間違い/間違っている, ok/okay. */
  readonly variants: readonly (readonly string[])[];
  /** (4) Copulas after which a verdict is read; `negated` ones flip it. */
  readonly copula: {
    /** `token`: whitespace tokens (first 5); `char`: unspaced text (first 16 characters). */
    readonly mode: 'token' | 'char';
    readonly words: readonly string[];
    /** Token endings that act as a copula or topic marker (it's, c'est, 행동은). */
    readonly endings: readonly string[];
    readonly negated: readonly string[];
    /** A first sentence opening with one of these is conditional: the copula rule does not read it. */
    readonly conditionals: readonly string[];
  };
}

// One table per language, alike in shape only: each holds its own language's words, so nothing here is shared.
export const PLUS_TABLES: Readonly<Record<Language, PlusLanguageTable>> = {
  en: {
    negators: [
      'not', 'not at all', 'never', 'by no means', 'in no way', 'hardly', 'far from',
      "don't", 'do not', "doesn't", 'does not', "didn't", 'did not', "can't", 'cannot', 'could not',
      "couldn't", "isn't", 'is not', "wasn't", 'was not',
    ],
    negPrefixes: ['un', 'in', 'im', 'ir', 'non-', 'non'],
    negSuffixes: [],
    negStems: [],
    trailingNeg: { end: [], inside: [] },
    hedges: [
      'well', 'honestly', 'frankly', 'to be honest', 'i think', 'i think that', 'i believe',
      'i believe that', 'i would say', "i'd say", 'i feel', 'i feel that', 'in my view',
      'in my opinion', 'personally', 'overall', 'ultimately', 'morally', 'ethically', 'clearly',
      'definitely', 'absolutely', 'certainly', 'probably', 'arguably', 'quite', 'very', 'somewhat',
      'mostly', 'largely', 'fairly', 'entirely', 'completely', 'totally', 'deeply', 'really',
      'strongly', 'firmly', 'fully', 'hmm', 'so', 'okay', 'ok', 'i',
      // Answer-particle equivalents: "That's right, it was wrong." must not read "right".
      "that's right", 'that is right', "that's true", 'that is true', 'exactly', 'indeed',
    ],
    negHedges: [
      "i don't think", 'i do not think', "i don't believe", 'i do not believe', "i wouldn't say",
      'i would not say', "i don't feel", "i don't think that",
    ],
    suffixes: ['ly', 's', 'd', 'ed', 'ful', 'fully'],
    stems: [['able', ['ably']], ['ible', ['ibly']]],
    variants: [['okay', 'ok', 'o.k.'], ['wrong', 'incorrect'], ['right', 'correct']],
    copula: {
      mode: 'token',
      words: ['is', 'was', 'are', 'were', 'be', 'been', 'seems', 'seemed', 'sounds', 'feels', 'remains'],
      endings: ["'s"],
      negated: ["isn't", "wasn't", "aren't", "weren't", 'isnt', 'wasnt'],
      conditionals: ['whether', 'if', 'unless'],
    },
  },
  de: {
    negators: [
      'nicht', 'keineswegs', 'keinesfalls', 'überhaupt nicht', 'gar nicht', 'kein', 'keine', 'nie',
      'niemals',
    ],
    negPrefixes: ['un', 'nicht-'],
    negSuffixes: [],
    negStems: [],
    trailingNeg: {
      end: ['nicht', 'nicht ab', 'nicht unbedingt', 'nicht wirklich', 'keineswegs', 'keinesfalls', 'nie', 'niemals'],
      inside: [],
    },
    hedges: [
      'nun', 'naja', 'na ja', 'also', 'ehrlich gesagt', 'offen gesagt', 'ehrlich', 'ich finde es',
      'ich finde das', 'ich halte es für', 'ich halte das für', 'ich finde', 'ich denke', 'ich glaube',
      'ich meine', 'meiner meinung nach', 'meines erachtens', 'persönlich', 'insgesamt', 'klar',
      'eindeutig', 'moralisch', 'ethisch', 'durchaus', 'absolut', 'ganz', 'völlig', 'eher', 'sehr',
      'ziemlich', 'definitiv', 'wohl', 'grundsätzlich', 'entschieden', 'ich',
    ],
    negHedges: [
      'ich glaube nicht, dass', 'ich denke nicht, dass', 'ich finde nicht, dass',
      'ich halte es nicht für', 'ich halte das nicht für', 'ich finde es nicht', 'ich finde das nicht',
    ],
    suffixes: ['e', 'er', 'es', 'en', 'em'],
    stems: [],
    variants: [['richtig', 'korrekt'], ['in ordnung', 'okay', 'ok']],
    copula: {
      mode: 'token',
      words: ['ist', 'war', 'sind', 'waren', 'wäre', 'wären', 'scheint', 'schien', 'bleibt', 'erscheint'],
      endings: [],
      negated: [],
      conditionals: ['ob', 'wenn', 'falls'],
    },
  },
  fr: {
    negators: ['pas', 'pas du tout', 'non', 'nullement', 'aucunement', 'jamais', 'ne', "n'"],
    negPrefixes: ['in', 'im', 'ir', 'non-', 'non '],
    negSuffixes: [],
    negStems: [],
    trailingNeg: { end: [], inside: [] },
    hedges: [
      'eh bien', 'bon', 'honnêtement', 'franchement', 'à mon avis', 'selon moi', 'je pense que',
      'je crois que', 'je trouve que', 'je pense', 'je crois', 'je trouve', 'personnellement',
      'clairement', 'moralement', 'éthiquement', 'absolument', 'vraiment', 'plutôt', 'tout à fait',
      'totalement', 'globalement', 'fermement', 'très', 'je',
    ],
    negHedges: [
      'je ne pense pas que', 'je ne crois pas que', 'je ne trouve pas que', 'je ne dirais pas que',
    ],
    suffixes: ['e', 's', 'es', 'ment', 'ement'],
    stems: [],
    variants: [['mal', 'mauvais', 'mauvaise'], ['bien', 'correct'], ['d\'accord', 'ok', 'okay']],
    copula: {
      mode: 'token',
      words: ['est', 'était', 'sont', 'étaient', 'serait', 'semble', 'fut', 'reste', 'paraît', 'parait'],
      endings: ["'est", "'était", "'etait"],
      negated: [],
      conditionals: ['si', "s'il"],
    },
  },
  zh: {
    negators: [
      '不是', '不', '并不是', '并不', '并非', '并没有', '没有', '不算是', '不算', '算不上', '谈不上', '说不上',
      '绝不是', '绝非', '不能说是', '不能说', '称不上',
    ],
    negPrefixes: [],
    negSuffixes: [],
    negStems: [],
    trailingNeg: { end: [], inside: [] },
    hedges: [
      '我认为', '我觉得', '我想', '我相信', '在我看来', '我个人认为', '说实话', '老实说', '坦白说', '其实', '总的来说',
      '嗯', '好吧', '显然', '当然', '确实', '绝对', '非常', '很', '太', '有点', '比较', '道德上', '从道德上讲', '坚决',
      '强烈', '完全', '我',
    ],
    negHedges: ['我不认为', '我不觉得', '我并不认为', '我并不觉得'],
    suffixes: [],
    stems: [],
    // 对 is left out: it is also the "yes, right" answer particle (examples/far6/concept-pairs.yaml).
    variants: [
      ['错误', '错的', '错', '有错'],
      ['正确', '正确的'],
      ['反对', '我反对'],
      ['支持', '赞成', '赞同', '我支持'],
      ['可以接受', '可接受', '能接受'],
      ['不可接受', '不能接受', '无法接受'],
    ],
    copula: {
      mode: 'char',
      words: ['是', '算是', '属于'],
      endings: [],
      negated: ['不是', '并不是', '并非', '不算是', '不算', '算不上', '不属于', '不能说是', '不能算是', '称不上是'],
      conditionals: ['如果', '是否', '若', '假如'],
    },
  },
  ja: {
    negators: [],
    negPrefixes: [],
    negSuffixes: [
      'ではない', 'ではありません', 'ではなかった', 'ではありませんでした', 'じゃない', 'じゃありません',
      'じゃなかった', 'でない', 'ではないです', 'しない', 'しません', 'していない', 'していません',
      'しなかった', 'いない', 'いません', 'いなかった', 'とは言えない', 'とは言えません', 'とはいえない',
    ],
    negStems: [
      ['いる', ['いない', 'いません', 'いなかった']],
      ['い', ['くない', 'くありません', 'くなかった', 'くないです']],
      ['かった', ['くなかった']],
      ['です', ['ではありません', 'じゃないです', 'ではないです']],
      ['します', ['しません']],
      ['する', ['しない']],
      ['だ', ['ではない', 'じゃない']],
    ],
    trailingNeg: {
      end: [],
      inside: [
        'とは思いません', 'とは思わない', 'とは思いませんでした', 'とは思わなかった', 'とは言えません',
        'とは言えない', 'とはいえない', 'とは考えません', 'とは考えない', 'ではありません', 'ではない',
        'ではなかった', 'じゃない', 'じゃありません', 'ことはない', 'ことはありません',
      ],
    },
    hedges: [
      '私は', '私としては', '私の考えでは', '個人的には', '正直に言うと', '正直なところ', '正直', 'まあ', 'うーん',
      'えっと', '明らかに', '道徳的に', '倫理的に', '確かに', 'はっきり言って', 'かなり', 'とても', '非常に',
      '少し', 'やや', '強く',
    ],
    negHedges: [],
    suffixes: [],
    stems: [],
    // いい is left out: いいえ (no) starts with it.
    variants: [
      ['悪い', '悪かった', '悪いです'],
      ['良い', 'よい', '良かった', 'よかった', '良いです'],
      ['間違い', '間違っている', '間違った', '間違って', '誤り'],
      ['正しい', '正しかった'],
      ['反対', '反対です', '反対します', '反対する'],
      ['賛成', '賛成です', '賛成します', '賛成する', '支持'],
    ],
    copula: {
      mode: 'char',
      words: ['は', 'が', 'も'],
      endings: [],
      negated: [],
      conditionals: ['もし'],
    },
  },
  ko: {
    negators: ['안'],
    negPrefixes: [],
    negSuffixes: [
      '이 아니', '가 아니', '은 아니', '는 아니', '이 아닙', '가 아닙', '은 아닙', '는 아닙', '지 않', '하지 않',
      '되지 않', '이지 않', '된 것이 아니', '된 것은 아니', '한 것이 아니', '한 것은 아니', '된 것이 아닙',
      '된 것은 아닙', '한 것이 아닙', '한 것은 아닙', '이라고 할 수 없', '라고 할 수 없',
    ],
    negStems: [
      ['다', ['지 않']],
      ['합니다', ['하지 않']],
      ['습니다', ['지 않']],
    ],
    trailingNeg: {
      end: [],
      inside: [
        '고 생각하지 않', '고 보지 않', '고 할 수 없', '고 말할 수 없', '고 생각되지 않', '것은 아니', '것이 아니',
        '것은 아닙', '것이 아닙',
      ],
    },
    hedges: [
      '제 생각에는', '제 생각에', '제 생각으로는', '저는', '나는', '솔직히 말하면', '솔직히', '개인적으로는',
      '개인적으로', '음', '글쎄요', '분명히', '도덕적으로', '윤리적으로', '확실히', '매우', '정말', '아주', '다소',
      '강하게',
    ],
    negHedges: [],
    suffixes: [],
    stems: [],
    // 맞 (맞다, "correct") is left out: 맞아요 is also "yes, right".
    variants: [
      ['잘못', '틀렸', '틀린'],
      ['옳다', '옳', '올바르', '올바른'],
      ['괜찮', '괜찮다'],
      ['반대', '반대합니다'],
      ['찬성', '찬성합니다', '지지'],
    ],
    copula: {
      mode: 'token',
      words: [],
      endings: ['은', '는', '이', '가', '도'],
      negated: [],
      conditionals: ['만약'],
    },
  },
};
