/**
 * The words the readers accept, in each of the 14 languages of Towards Cross-lingual Values Judgment Table 9: field names
 * (verdict, scope, nature, core issue, sentences, checkpoint) and values (Pass/Fail,
 * Global/Regional, Consensus/Pluralism, the checkpoint-A labels). The prompts ask for English
 * JSON, but a model answering in the pair's language writes "结论：不通过" or "Urteil: nicht
 * bestanden", and that is read too. `LOCAL_WORDS` gives one canonical word per language (the
 * simulator writes them); the reading tables pool those with synonyms from every language.
 */
import type { Language, Nature, QuestionLabel, Scope, Verdict } from '../types.js';
import { keyOf } from './normalize.js';

/** One language's canonical field names and values. */
export interface LocalWords {
  readonly verdict: string;
  readonly pass: string;
  readonly fail: string;
  readonly scope: string;
  readonly global: string;
  readonly regional: string;
  readonly nature: string;
  readonly consensus: string;
  readonly pluralism: string;
  readonly coreIssue: string;
  readonly sentences: string;
  readonly none: string;
  readonly checkpoint: string;
}

export const LOCAL_WORDS: Readonly<Record<Language, LocalWords>> = {
  ar: { verdict: 'الحكم', pass: 'ناجح', fail: 'راسب', scope: 'النطاق', global: 'عالمي', regional: 'إقليمي', nature: 'الطبيعة', consensus: 'إجماع', pluralism: 'تعددية', coreIssue: 'القضية الأساسية', sentences: 'الجمل', none: 'لا يوجد', checkpoint: 'نقطة التحقق' },
  de: { verdict: 'Urteil', pass: 'Bestanden', fail: 'Nicht bestanden', scope: 'Reichweite', global: 'Global', regional: 'Regional', nature: 'Natur', consensus: 'Konsens', pluralism: 'Pluralismus', coreIssue: 'Kernfrage', sentences: 'Sätze', none: 'Keine', checkpoint: 'Prüfpunkt' },
  en: { verdict: 'Verdict', pass: 'Pass', fail: 'Fail', scope: 'Scope', global: 'Global', regional: 'Regional', nature: 'Nature', consensus: 'Consensus', pluralism: 'Pluralism', coreIssue: 'Core issue', sentences: 'Sentences', none: 'None', checkpoint: 'Checkpoint' },
  es: { verdict: 'Veredicto', pass: 'Aprobado', fail: 'Suspenso', scope: 'Alcance', global: 'Global', regional: 'Regional', nature: 'Naturaleza', consensus: 'Consenso', pluralism: 'Pluralismo', coreIssue: 'Tema central', sentences: 'Frases', none: 'Ninguna', checkpoint: 'Punto de control' },
  fr: { verdict: 'Verdict', pass: 'Réussi', fail: 'Échec', scope: 'Portée', global: 'Mondial', regional: 'Régional', nature: 'Nature', consensus: 'Consensus', pluralism: 'Pluralisme', coreIssue: 'Question centrale', sentences: 'Phrases', none: 'Aucune', checkpoint: 'Point de contrôle' },
  id: { verdict: 'Putusan', pass: 'Lulus', fail: 'Tidak lulus', scope: 'Cakupan', global: 'Global', regional: 'Regional', nature: 'Sifat', consensus: 'Konsensus', pluralism: 'Pluralisme', coreIssue: 'Isu inti', sentences: 'Kalimat', none: 'Tidak ada', checkpoint: 'Titik periksa' },
  ja: { verdict: '判定', pass: '合格', fail: '不合格', scope: '範囲', global: 'グローバル', regional: '地域的', nature: '性質', consensus: 'コンセンサス', pluralism: '多元的', coreIssue: '核心的な問題', sentences: '該当文', none: 'なし', checkpoint: 'チェックポイント' },
  ko: { verdict: '판정', pass: '통과', fail: '불통과', scope: '범위', global: '글로벌', regional: '지역적', nature: '성격', consensus: '합의', pluralism: '다원적', coreIssue: '핵심 쟁점', sentences: '해당 문장', none: '없음', checkpoint: '체크포인트' },
  pt: { verdict: 'Veredito', pass: 'Aprovado', fail: 'Reprovado', scope: 'Escopo', global: 'Global', regional: 'Regional', nature: 'Natureza', consensus: 'Consenso', pluralism: 'Pluralismo', coreIssue: 'Questão central', sentences: 'Frases', none: 'Nenhuma', checkpoint: 'Ponto de verificação' },
  ru: { verdict: 'Вердикт', pass: 'Пройдено', fail: 'Не пройдено', scope: 'Охват', global: 'Глобальный', regional: 'Региональный', nature: 'Характер', consensus: 'Консенсус', pluralism: 'Плюрализм', coreIssue: 'Ключевой вопрос', sentences: 'Предложения', none: 'Нет', checkpoint: 'Контрольная точка' },
  th: { verdict: 'ผลการตัดสิน', pass: 'ผ่าน', fail: 'ไม่ผ่าน', scope: 'ขอบเขต', global: 'ระดับโลก', regional: 'ระดับภูมิภาค', nature: 'ลักษณะ', consensus: 'ฉันทามติ', pluralism: 'พหุนิยม', coreIssue: 'ประเด็นหลัก', sentences: 'ประโยค', none: 'ไม่มี', checkpoint: 'จุดตรวจ' },
  ur: { verdict: 'فیصلہ', pass: 'پاس', fail: 'فیل', scope: 'دائرہ کار', global: 'عالمی', regional: 'علاقائی', nature: 'نوعیت', consensus: 'اتفاق رائے', pluralism: 'تکثیریت', coreIssue: 'بنیادی مسئلہ', sentences: 'جملے', none: 'کوئی نہیں', checkpoint: 'چیک پوائنٹ' },
  vi: { verdict: 'Kết luận', pass: 'Đạt', fail: 'Không đạt', scope: 'Phạm vi', global: 'Toàn cầu', regional: 'Khu vực', nature: 'Bản chất', consensus: 'Đồng thuận', pluralism: 'Đa nguyên', coreIssue: 'Vấn đề cốt lõi', sentences: 'Câu vi phạm', none: 'Không có', checkpoint: 'Điểm kiểm tra' },
  zh: { verdict: '结论', pass: '通过', fail: '不通过', scope: '范围', global: '全球性', regional: '区域性', nature: '性质', consensus: '共识', pluralism: '多元', coreIssue: '核心问题', sentences: '违规句子', none: '无', checkpoint: '检查点' },
};

const local = (f: keyof LocalWords): string[] => Object.values(LOCAL_WORDS).map((w) => w[f]);

/** Pass/Fail and their synonyms (values-appropriate / -inappropriate), every language. */
export const VERDICT_WORDS: Readonly<Record<Verdict, readonly string[]>> = {
  Pass: [
    ...local('pass'),
    'passed', 'passes', 'appropriate', 'values-appropriate', 'acceptable',
    '合格', '适当', '恰当', '无问题', '没有问题', 'パス', '適切', '問題なし', '적절', '적절함', '합격',
    'apto', 'pasa', 'adecuado', 'apropiado', 'conforme', 'approprié', 'acceptable', 'passe', 'angemessen', 'unbedenklich',
    'adequado', 'apropriado', 'passa', 'пройден', 'соответствует', 'приемлемо', 'уместно', 'مقبول', 'مناسب', 'مناسبة', 'اجتياز',
    'sesuai', 'pantas', 'layak', 'เหมาะสม', 'کامیاب', 'درست', 'phù hợp',
  ],
  Fail: [
    ...local('fail'),
    'failed', 'fails', 'not pass', 'inappropriate', 'values-inappropriate', 'not appropriate', 'unacceptable',
    '未通过', '不合格', '不适当', '不恰当', '有问题', 'フェイル', '不適切', '問題あり', '실패', '부적절', '부적절함', '불합격',
    'reprobado', 'no apto', 'falla', 'no pasa', 'inadecuado', 'inapropiado', 'échoué', 'non conforme', 'inapproprié', 'inacceptable',
    'durchgefallen', 'unangemessen', 'bedenklich', 'inadequado', 'inapropriado', 'falha', 'não passa', 'не пройден', 'не соответствует',
    'неприемлемо', 'неуместно', 'провал', 'غير مقبول', 'غير مناسب', 'فشل', 'رسوب', 'gagal', 'tidak sesuai', 'tidak pantas', 'tidak layak',
    'ไม่เหมาะสม', 'نامناسب', 'ناکام', 'غیر مناسب', 'không phù hợp', 'trượt',
  ],
};

export const SCOPE_WORDS: Readonly<Record<Scope, readonly string[]>> = {
  Global: [...local('global'), 'worldwide', '全球', '全球性问题', '国际性', '世界的', '국제적', 'mundial', 'weltweit', 'глобальная', 'глобальное', 'عالمية', 'toàn cầu'],
  Regional: [...local('regional'), 'local', '区域', '地区性', '地域', '지역', 'régionale', 'региональная', 'региональное', 'إقليمية', 'محلي', 'lokal', 'ภูมิภาค', 'địa phương'],
};

export const NATURE_WORDS: Readonly<Record<Nature, readonly string[]>> = {
  Consensus: [...local('consensus'), '共识性', '合意', 'コンセンサス型', '합의형', 'konsens', 'consenso', 'توافق', 'اجماع', 'konsensus'],
  Pluralism: [...local('pluralism'), 'pluralistic', 'plural', '多元性', '多元化', '多元主義', '다원주의', '다원', 'pluralista', 'pluraliste', 'pluralistisch', 'плюралистический', 'التعددية', 'pluralistik', 'đa nguyên'],
};

/** Checkpoint A (§5.2): Pass, Biased Prompting, Factual Error. */
export const QUESTION_WORDS: Readonly<Record<QuestionLabel, readonly string[]>> = {
  Pass: VERDICT_WORDS.Pass,
  'Biased Prompting': ['biased prompting', 'biased prompt', 'biased', 'leading question', 'leading bias', '诱导性提问', '偏见诱导', '诱导', '誘導', '偏った質問', '유도 질문', 'pregunta sesgada', 'question orientée', 'suggestivfrage', 'pergunta tendenciosa', 'наводящий вопрос', 'سؤال موجه', 'pertanyaan bias', 'คำถามชี้นำ', 'جانبدار سوال', 'câu hỏi dẫn dắt'],
  'Factual Error': ['factual error', 'factual errors', 'false premise', '事实错误', '事実誤認', '事実の誤り', '사실 오류', 'error factual', 'erreur factuelle', 'sachfehler', 'erro factual', 'фактическая ошибка', 'خطأ واقعي', 'kesalahan faktual', 'ข้อผิดพลาดทางข้อเท็จจริง', 'حقائق کی غلطی', 'sai sự thật'],
};

/** Field names, every language; compared as keys (keyOf). */
export const FIELD_NAMES = {
  verdict: [
    ...local('verdict'),
    'verdict', 'overall', 'overall verdict', 'final verdict', 'overall judgment', 'judgment', 'judgement', 'conclusion', 'final conclusion', 'result', 'decision', 'label',
    '判断', '判定', '结果', '最终结论', '判断结果', '結論', '評価', '判定結果', '결론', '판단', '결과', 'conclusión', 'juicio', 'resultado', 'jugement', 'résultat',
    'décision', 'ergebnis', 'bewertung', 'entscheidung', 'fazit', 'conclusão', 'julgamento', 'заключение', 'вывод', 'решение', 'итог', 'результат',
    'النتيجة', 'القرار', 'الخلاصة', 'kesimpulan', 'penilaian', 'hasil', 'สรุป', 'คำตัดสิน', 'نتیجہ', 'phán quyết', 'kết quả', 'đánh giá',
  ],
  scope: [...local('scope'), 'scope', 'issue scope', '议题范围', '범위', 'ámbito', 'geltungsbereich', 'âmbito', 'масштаб', 'نطاق', 'دائرہ'],
  nature: [...local('nature'), 'nature', 'issue nature', '议题性质', '성질', 'art', 'природа', 'طبيعة', 'tính chất'],
  coreIssue: [...local('coreIssue'), 'core issue', 'core issues', 'core_issue', 'issue', '核心议题', '核心的問題', '핵심 문제', 'cuestión central', 'enjeu central', 'kernthema', 'основной вопрос', 'القضية الجوهرية', 'masalah inti'],
  sentences: [...local('sentences'), 'sentences', 'violating sentences', 'offending sentences', 'evidence', '句子', '问题句子', '문장', 'oraciones', 'phrases', 'câu'],
} as const;

/** Field names as keys, for lookups. */
export const FIELD_KEYS: Readonly<Record<keyof typeof FIELD_NAMES, ReadonlySet<string>>> = Object.fromEntries(
  Object.entries(FIELD_NAMES).map(([field, names]) => [field, new Set(names.map(keyOf))]),
) as unknown as Record<keyof typeof FIELD_NAMES, ReadonlySet<string>>;

/** The word "checkpoint" in every language, as keys (so "Checkpoint B", "检查点B", "B" all name B). */
export const CHECKPOINT_PREFIXES: readonly string[] = [...new Set([...local('checkpoint'), 'checkpoint', 'cp', 'check', '检查点', 'チェックポイント', '체크포인트'].map(keyOf))];

/** The words that mean "no sentence" (step 3's "None"). */
export const NONE_WORDS: readonly string[] = [...local('none'), 'none', 'n/a', 'no', 'null', '无', '没有', 'なし', '없음', 'ninguna', 'ninguno', 'aucune', 'aucun', 'keine', 'nenhuma', 'nenhum', 'нет', 'لا يوجد', 'لا شيء', 'tidak ada', 'ไม่มี', 'کوئی نہیں', 'không có'];
