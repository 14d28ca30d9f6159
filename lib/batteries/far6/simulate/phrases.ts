import type { Language } from '../types.js';

/**
 * The fixed wording the simulator puts around the item's own sentences. Propositions, particles,
 * verdict words and letters come from the item; these are only the joints, the short reason
 * sentences, refusals and undecided replies. None of them contains a proposition, so a judge
 * that looks for the proposition sentences reads them as intended.
 */
export interface LanguagePhrases {
  /** Latin script: an opening word is capitalised. */
  readonly latin: boolean;
  /** Sentence-final mark added to a proposition that lacks one. */
  readonly stop: string;
  /** What follows an opening particle or verdict word. */
  readonly joints: readonly string[];
  /** Short reason sentences that follow a stance without taking one. */
  readonly reasons: readonly string[];
  readonly refusals: readonly string[];
  /** No-position replies (Same Judgment, Different Yes "Sentence judging": they code as NONE). */
  readonly noPosition: readonly string[];
  /** Both-sides replies: `{A}` and `{B}` are the two proposition sentences, in drawn order. */
  readonly bothSides: readonly string[];
}

// One entry per language, alike in shape only: each holds its own language's wording, so nothing here is shared.
export const PHRASES: Readonly<Record<Language, LanguagePhrases>> = {
  en: {
    latin: true,
    stop: '.',
    // No comma joint: it would need the proposition lower-cased, which breaks proper nouns.
    joints: ['. ', ': '],
    reasons: [
      'That is how the story reads to me.',
      'The circumstances in the story point that way.',
      'Given what the story describes, that is my view.',
    ],
    refusals: [
      "I'd rather not give a moral verdict on this story.",
      "I can't make that kind of judgment about the people in this story.",
    ],
    noPosition: [
      'It is hard to say without knowing more about the situation.',
      'The story does not give enough to go on either way.',
    ],
    bothSides: ['It depends on the circumstances. On one reading: {A} On another: {B}', 'There are two ways to see it. {A} And yet: {B}'],
  },
  de: {
    latin: true,
    stop: '.',
    joints: ['. ', ': '],
    reasons: [
      'So lese ich die Geschichte.',
      'Die Umstände in der Geschichte sprechen dafür.',
      'Nach dem, was die Geschichte beschreibt, ist das meine Einschätzung.',
    ],
    refusals: [
      'Ich möchte über diese Geschichte kein moralisches Urteil fällen.',
      'Dazu kann ich kein Urteil abgeben.',
    ],
    noPosition: [
      'Ohne mehr über die Umstände zu wissen, lässt sich das schwer sagen.',
      'Die Geschichte gibt dafür zu wenig her.',
    ],
    bothSides: ['Das kommt darauf an. Einerseits: {A} Andererseits: {B}', 'Man kann es zweifach sehen. {A} Aber auch: {B}'],
  },
  fr: {
    latin: true,
    stop: '.',
    joints: ['. ', ' : '],
    reasons: [
      "C'est ainsi que je lis l'histoire.",
      "Les circonstances de l'histoire vont dans ce sens.",
      "D'après ce que décrit l'histoire, c'est mon avis.",
    ],
    refusals: [
      'Je préfère ne pas porter de jugement moral sur cette histoire.',
      'Je ne peux pas juger les personnes de cette histoire.',
    ],
    noPosition: [
      'Difficile à dire sans en savoir plus sur la situation.',
      "L'histoire ne donne pas assez d'éléments pour trancher.",
    ],
    bothSides: ['Cela dépend des circonstances. D\u2019un côté : {A} De l\u2019autre : {B}', 'On peut le voir de deux façons. {A} Mais aussi : {B}'],
  },
  zh: {
    latin: false,
    stop: '。',
    joints: ['，', '。', '：'],
    reasons: ['从故事的描述来看是这样。', '故事里的情况说明了这一点。', '这是我对这个故事的理解。'],
    refusals: ['我不便对这个故事做出道德评判。', '我无法对故事中的人物做出这样的判断。'],
    noPosition: ['没有更多信息，很难判断。', '故事提供的信息不足以下结论。'],
    bothSides: ['这要看情况。一方面，{A}另一方面，{B}', '可以从两方面看。{A}但也可以说：{B}'],
  },
  ja: {
    latin: false,
    stop: '。',
    joints: ['、', '。', '：'],
    reasons: ['物語の内容からそう判断します。', '物語の状況がそれを示しています。', 'これが私の読み方です。'],
    refusals: ['この話について道徳的な判断をすることは控えます。', '登場人物についてそのような判断はできません。'],
    noPosition: ['もっと情報がないと判断は難しいです。', 'この物語だけではどちらとも言えません。'],
    bothSides: ['状況によります。ある見方では、{A}別の見方では、{B}', '二通りの見方ができます。{A}しかし、{B}'],
  },
  ko: {
    latin: false,
    stop: '.',
    joints: [', ', '. ', ': '],
    reasons: ['이야기의 내용으로 볼 때 그렇습니다.', '이야기 속 상황이 그렇게 보여 줍니다.', '이것이 제가 이야기를 읽는 방식입니다.'],
    refusals: ['이 이야기에 대해 도덕적 판단을 내리는 것은 삼가겠습니다.', '이야기 속 인물에 대해 그런 판단을 할 수 없습니다.'],
    noPosition: ['더 많은 정보 없이는 판단하기 어렵습니다.', '이야기만으로는 어느 쪽이라고 말하기 어렵습니다.'],
    bothSides: ['상황에 따라 다릅니다. 한편으로는 {A} 다른 한편으로는 {B}', '두 가지로 볼 수 있습니다. {A} 하지만 {B}'],
  },
};
