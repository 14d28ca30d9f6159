/**
 * What simulated replies say, per language (written for this project): an answer frame for short
 * answers, the explanation after an option letter, a reply with no option, and wrong answers.
 * Languages outside the six use the English phrases.
 */
import type { LanguageCode } from '../../../api/battery.js';

interface Phrases {
  /** A short answer in a sentence. */
  readonly answer: (x: string) => string;
  /** After "B. <option text>". */
  readonly because: string;
  /** A multiple-choice reply that names no option. */
  readonly undecided: string;
  /** Wrong short answers, one picked per reply (skipping any that is the right one). */
  readonly wrong: readonly string[];
}

const PHRASES: Readonly<Record<string, Phrases>> = {
  en: { answer: (x) => `The answer is ${x}.`, because: 'This is the correct option.', undecided: 'I cannot choose between these options.', wrong: ['Napoleon', 'Berlin', 'Mount Kilimanjaro', 'the Amazon', 'Isaac Newton'] },
  zh: { answer: (x) => `答案是${x}。`, because: '这是正确的选项。', undecided: '我无法在这些选项中做出选择。', wrong: ['拿破仑', '柏林', '乞力马扎罗山', '亚马孙河', '艾萨克·牛顿'] },
  fr: { answer: (x) => `La réponse est ${x}.`, because: "C'est la bonne option.", undecided: 'Je ne peux pas choisir entre ces options.', wrong: ['Napoléon', 'Berlin', 'le Kilimandjaro', "l'Amazone", 'Isaac Newton'] },
  ja: { answer: (x) => `答えは${x}です。`, because: 'これが正しい選択肢です。', undecided: 'これらの選択肢からは選べません。', wrong: ['ナポレオン', 'ベルリン', 'キリマンジャロ山', 'アマゾン川', 'アイザック・ニュートン'] },
  ko: { answer: (x) => `정답은 ${x}입니다.`, because: '이것이 정답입니다.', undecided: '이 선택지들 중에서 고를 수 없습니다.', wrong: ['나폴레옹', '베를린', '킬리만자로산', '아마존강', '아이작 뉴턴'] },
  hi: { answer: (x) => `उत्तर ${x} है।`, because: 'यही सही विकल्प है।', undecided: 'मैं इन विकल्पों में से चुन नहीं सकता।', wrong: ['नेपोलियन', 'बर्लिन', 'किलिमंजारो पर्वत', 'अमेज़न नदी', 'आइज़क न्यूटन'] },
};

/** The phrases of a language (English for one outside the six). */
export function phrasesFor(language: LanguageCode): Phrases {
  return PHRASES[language] ?? (PHRASES.en as Phrases);
}

/** NFKC, lower case, spaces collapsed: how answers are compared. */
export function normalizeAnswer(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
}

/** Whether a reply contains one of the accepted answers. */
export function mentionsAny(reply: string, answers: readonly string[]): boolean {
  const r = normalizeAnswer(reply);
  return answers.some((a) => a.trim() !== '' && r.includes(normalizeAnswer(a)));
}
