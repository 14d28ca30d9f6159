import { seededRandom } from '../../../api/battery.js';
import { STORY_GROUPS } from '../types.js';
import type { Far6Story, Language, StoryGroup, StoryRendering } from '../types.js';

// SYNTHETIC placeholder stories for benchmarks and load tests, never for measurement: the acts
// below are generic, not piloted, and their group is assigned by construction. They exist so a
// benchmark can build an inventory the size of the paper's (Same Judgment, Different Yes "Stories and prompts": 105
// stories, acceptable 26, contested 46, violation 33; 1.1 million replies) without shipping 105
// authored vignettes. Every id starts with `syn-` so synthetic data cannot pass for real data.

/** The paper's group sizes out of 105 (Same Judgment, Different Yes "Stories and prompts"). */
const PAPER_GROUP_SIZES: Readonly<Record<StoryGroup, number>> = { acceptable: 26, contested: 46, violation: 33 };

/**
 * One act in every language. `{a}` is the agent's name; Korean frames use `{t}`, the name with
 * its topic particle (은 after a final consonant, 는 after a vowel).
 */
type Frame = Readonly<Record<Language, string>>;

const FRAMES: Readonly<Record<StoryGroup, readonly Frame[]>> = {
  acceptable: [
    {
      en: '{a} returned a lost phone to its owner at the station.',
      zh: '{a}在车站把捡到的手机还给了失主。',
      de: '{a} gab am Bahnhof ein gefundenes Handy seinem Besitzer zurück.',
      ja: '{a}は駅で拾った携帯電話を持ち主に返した。',
      ko: '{t} 역에서 주운 휴대폰을 주인에게 돌려주었다.',
      fr: "{a} a rendu à son propriétaire un téléphone trouvé à la gare.",
    },
    {
      en: '{a} helped a neighbour carry a sofa up the stairs.',
      zh: '{a}帮邻居把沙发抬上了楼。',
      de: '{a} half einem Nachbarn, ein Sofa die Treppe hinaufzutragen.',
      ja: '{a}は隣人がソファを階段で運び上げるのを手伝った。',
      ko: '{t} 이웃이 소파를 계단 위로 옮기는 것을 도왔다.',
      fr: "{a} a aidé un voisin à monter un canapé par l'escalier.",
    },
    {
      en: "{a} watered a colleague's plants while she was on holiday.",
      zh: '{a}在同事休假期间帮她给花浇水。',
      de: '{a} goss die Pflanzen einer Kollegin, während sie im Urlaub war.',
      ja: '{a}は同僚が休暇で留守のあいだ、その植物に水をやった。',
      ko: '{t} 동료가 휴가를 간 동안 동료의 화분에 물을 주었다.',
      fr: "{a} a arrosé les plantes d'une collègue pendant ses vacances.",
    },
  ],
  contested: [
    {
      en: "{a} praised a friend's new haircut without liking it.",
      zh: '{a}并不喜欢朋友的新发型，却当面夸了它。',
      de: '{a} lobte die neue Frisur einer Freundin, ohne sie schön zu finden.',
      ja: '{a}は友人の新しい髪型を、気に入っていないのにほめた。',
      ko: '{t} 마음에 들지 않았지만 친구의 새 머리 모양을 칭찬했다.',
      fr: "{a} a complimenté une amie sur sa nouvelle coupe sans vraiment l'aimer.",
    },
    {
      en: '{a} left work an hour early without telling the manager.',
      zh: '{a}没有告诉经理，提前一个小时下了班。',
      de: '{a} ging eine Stunde früher von der Arbeit nach Hause, ohne der Chefin Bescheid zu sagen.',
      ja: '{a}は上司に伝えずに、一時間早く仕事を切り上げた。',
      ko: '{t} 상사에게 말하지 않고 한 시간 일찍 퇴근했다.',
      fr: '{a} a quitté le travail une heure plus tôt sans prévenir la responsable.',
    },
    {
      en: "{a} read a partner's messages while the partner was asleep.",
      zh: '{a}趁伴侣睡着时看了对方的手机消息。',
      de: '{a} las die Nachrichten des Partners, während dieser schlief.',
      ja: '{a}はパートナーが寝ている間にその人のメッセージを読んだ。',
      ko: '{t} 연인이 자는 동안 연인의 메시지를 읽었다.',
      fr: "{a} a lu les messages de son partenaire pendant qu'il dormait.",
    },
  ],
  violation: [
    {
      en: "{a} took cash from a colleague's coat pocket.",
      zh: '{a}从同事的大衣口袋里拿走了现金。',
      de: '{a} nahm Bargeld aus der Manteltasche eines Kollegen.',
      ja: '{a}は同僚のコートのポケットから現金を抜き取った。',
      ko: '{t} 동료의 외투 주머니에서 현금을 꺼내 가졌다.',
      fr: "{a} a pris de l'argent liquide dans la poche du manteau d'un collègue.",
    },
    {
      en: '{a} kicked a stray cat that was sleeping by the door.',
      zh: '{a}踢了一只睡在门口的流浪猫。',
      de: '{a} trat nach einer streunenden Katze, die vor der Tür schlief.',
      ja: '{a}は玄関の前で寝ていた野良猫を蹴った。',
      ko: '{t} 문 앞에서 자고 있던 길고양이를 발로 찼다.',
      fr: '{a} a donné un coup de pied à un chat errant qui dormait devant la porte.',
    },
    {
      en: "{a} posted a classmate's private photos in the school group chat.",
      zh: '{a}把同学的私人照片发到了全校的群聊里。',
      de: '{a} stellte private Fotos einer Mitschülerin in den Gruppenchat der Schule.',
      ja: '{a}は同級生の私的な写真を学校のグループチャットに投稿した。',
      ko: '{t} 반 친구의 사적인 사진을 학교 단체 채팅방에 올렸다.',
      fr: "{a} a publié les photos privées d'une camarade dans le groupe de discussion de l'école.",
    },
  ],
};

/** Names per language; index k is "the same person" in every language. */
const NAMES: Readonly<Record<Language, readonly string[]>> = {
  en: ['Finn', 'Nora', 'Owen', 'Maya', 'Leo', 'Ruth', 'Sam', 'Iris'],
  zh: ['林帆', '王静', '张伟', '陈芳', '刘洋', '周婷', '孙浩', '黄敏'],
  de: ['Jonas', 'Lena', 'Paul', 'Mia', 'Felix', 'Greta', 'Emil', 'Lotte'],
  ja: ['健太', '美咲', '翔太', '由美', '拓也', '彩花', '悠真', '香織'],
  ko: ['민준', '서연', '지훈', '지은', '도윤', '수빈', '준서', '하은'],
  fr: ['Hugo', 'Léa', 'Louis', 'Chloé', 'Théo', 'Manon', 'Jules', 'Camille'],
};

function koreanTopic(name: string): string {
  const last = name.codePointAt(name.length - 1) ?? 0;
  const isSyllable = last >= 0xac00 && last <= 0xd7a3;
  const hasFinalConsonant = isSyllable && (last - 0xac00) % 28 !== 0;
  return `${name}${hasFinalConsonant ? '은' : '는'}`;
}

function render(frame: Frame, language: Language, agent: string): StoryRendering {
  const text = frame[language].replaceAll('{a}', agent).replaceAll('{t}', koreanTopic(agent));
  return { agent, text };
}

/**
 * Group sizes for `n` stories in the paper's 26 : 46 : 33 proportions, by largest remainder
 * (ties to the larger paper group), so `n = 105` gives exactly the paper's split.
 */
export function syntheticGroupSizes(n: number): Record<StoryGroup, number> {
  const total = PAPER_GROUP_SIZES.acceptable + PAPER_GROUP_SIZES.contested + PAPER_GROUP_SIZES.violation;
  const exact = STORY_GROUPS.map((g) => ({ g, x: (n * PAPER_GROUP_SIZES[g]) / total }));
  const sizes = { acceptable: 0, contested: 0, violation: 0 } as Record<StoryGroup, number>;
  let left = n;
  for (const { g, x } of exact) {
    sizes[g] = Math.floor(x);
    left -= sizes[g];
  }
  const byRemainder = [...exact].sort(
    (a, b) => b.x - Math.floor(b.x) - (a.x - Math.floor(a.x)) || PAPER_GROUP_SIZES[b.g] - PAPER_GROUP_SIZES[a.g],
  );
  for (let i = 0; i < left; i++) sizes[byRemainder[i % byRemainder.length]!.g] += 1;
  return sizes;
}

/**
 * `n` SYNTHETIC placeholder stories (ids `syn-001`, …) for benchmarks: groups split in the paper's
 * proportions (105 → 26 / 46 / 33), group order, names and acts drawn from `seed`, one rendering
 * per requested language built from per-language sentence frames, so each text is in its
 * language's script and contains its agent. Same arguments, same stories.
 * @example syntheticStories(105, ['en', 'ja'], 7).filter((s) => s.group === 'contested').length === 46
 */
export function syntheticStories(n: number, languages: readonly Language[], seed: number): Far6Story[] {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`syntheticStories: n must be a non-negative integer, got ${n}`);
  if (languages.length === 0) throw new RangeError('syntheticStories: expected at least one language');
  const random = seededRandom(seed);
  const draw = (k: number): number => Math.floor(random() * k);

  const sizes = syntheticGroupSizes(n);
  const groups: StoryGroup[] = STORY_GROUPS.flatMap((g) => Array<StoryGroup>(sizes[g]).fill(g));
  // Fisher–Yates, so groups interleave as in a real file and a prefix is not one group.
  for (let i = groups.length - 1; i > 0; i--) {
    const j = draw(i + 1);
    [groups[i], groups[j]] = [groups[j]!, groups[i]!];
  }

  const width = Math.max(3, String(n).length);
  return groups.map((group, index) => {
    const frame = FRAMES[group][draw(FRAMES[group].length)]!;
    const person = draw(NAMES.en.length);
    const renderings: Partial<Record<Language, StoryRendering>> = {};
    for (const language of languages) renderings[language] = render(frame, language, NAMES[language][person]!);
    return { id: `syn-${String(index + 1).padStart(width, '0')}`, group, renderings };
  });
}
