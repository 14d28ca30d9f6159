/**
 * The battery's default prompt templates (Disentangling Question, Response, and Verifier Languages §3.4, §3.5, §4.2, App. A), written for this
 * project: the paper's own prompts are in a figure not reproduced in the seed. A campaign replaces
 * any of them under `design.prompts` (checked by resolveTemplates.ts).
 *
 * Placeholders are `{name}`; `{{` and `}}` write literal braces.
 *
 * Generation (§3.4: "prompts place localized response-language directives differently for MMMLU
 * versus LSQA and TriviaQA"). The choice made here: one user message (no system message, which
 * some chat templates lack), written entirely in the question language, naming the requested
 * response language in the question language (`{response_language}`), so the question language is
 * the only language of the prompt and the response language only its request.
 * - multiple_choice (MMMLU, §3.1: "an option letter and brief explanation"): the question, the
 *   options (`A. …`, Latin letters in every language, as MMMLU keeps them), then the directive as
 *   the last line, after the answer format.
 * - short_answer (LSQA, TriviaQA, §3.1: "a short answer"): the directive first, then the question.
 *
 * Verifier (§3.5, App. A): the instruction localised into the verifier language, the question (with
 * its options, as generation showed them) and the reply unchanged, and the English labels True and
 * False kept in every language ("localized verifier instructions retain the English labels True and
 * False", Limitations). The reply must begin with the label: the probe reads the first token.
 *
 * Judge (§4.2, App. A): a 1–5 rubric on central factual correctness that ignores the language of
 * the response, with the question and choices, the response unchanged, the reference in the
 * response language, the English reference as a cross-check and the English aliases, ending in
 * `Feedback: … [RESULT] n` (the parser's format). English, like the paper's cross-check.
 */
import type { BenchmarkKind, PtrueLanguage } from '../types.js';

/** The placeholders each template must contain, and those it may. */
export const PLACEHOLDERS = {
  generate: {
    multiple_choice: { required: ['question', 'options', 'response_language'], optional: [] },
    short_answer: { required: ['question', 'response_language'], optional: [] },
  },
  verify: { required: ['question', 'answer'], optional: [] },
  judge: { required: ['question', 'response', 'reference'], optional: ['reference_en', 'aliases', 'response_language'] },
} as const;

export const GENERATE_TEMPLATES: Readonly<Record<BenchmarkKind, Readonly<Record<PtrueLanguage, string>>>> = {
  multiple_choice: {
    en: '{question}\n\n{options}\n\nAnswer with the letter of the correct option, followed by a brief explanation. Write your answer in {response_language}.',
    zh: '{question}\n\n{options}\n\n请先给出正确选项的字母，再作简要解释。请用{response_language}作答。',
    fr: '{question}\n\n{options}\n\nIndiquez la lettre de la bonne option, puis une brève explication. Rédigez votre réponse en {response_language}.',
    ja: '{question}\n\n{options}\n\n正しい選択肢の記号を答え、続けて簡潔に説明してください。{response_language}で答えてください。',
    ko: '{question}\n\n{options}\n\n정답 선택지의 알파벳을 쓰고 간단히 설명하세요. {response_language}로 답하세요.',
    hi: '{question}\n\n{options}\n\nसही विकल्प का अक्षर बताइए, फिर संक्षिप्त व्याख्या दीजिए। अपना उत्तर {response_language} में लिखिए।',
  },
  short_answer: {
    en: 'Answer the following question in {response_language} with a short answer.\n\n{question}',
    zh: '请用{response_language}简短回答下面的问题。\n\n{question}',
    fr: 'Répondez à la question suivante en {response_language}, par une réponse courte.\n\n{question}',
    ja: '次の質問に{response_language}で簡潔に答えてください。\n\n{question}',
    ko: '다음 질문에 {response_language}로 짧게 답하세요.\n\n{question}',
    hi: 'निम्नलिखित प्रश्न का उत्तर {response_language} में संक्षेप में दीजिए।\n\n{question}',
  },
};

export const VERIFY_TEMPLATES: Readonly<Record<PtrueLanguage, string>> = {
  en: 'Question: {question}\n\nProposed answer: {answer}\n\nIs the proposed answer correct? Reply with one word: True or False.',
  zh: '问题：{question}\n\n建议答案：{answer}\n\n这个建议答案正确吗？请只用一个词回答：True 或 False。',
  fr: 'Question : {question}\n\nRéponse proposée : {answer}\n\nLa réponse proposée est-elle correcte ? Répondez par un seul mot : True ou False.',
  ja: '質問：{question}\n\n提案された回答：{answer}\n\n提案された回答は正しいですか？ True か False の一語だけで答えてください。',
  ko: '질문: {question}\n\n제안된 답변: {answer}\n\n제안된 답변이 맞습니까? True 또는 False 한 단어로만 답하세요.',
  hi: 'प्रश्न: {question}\n\nप्रस्तावित उत्तर: {answer}\n\nक्या प्रस्तावित उत्तर सही है? केवल एक शब्द में उत्तर दें: True या False।',
};

export const JUDGE_TEMPLATE = `###Task Description:
A question, a response to evaluate, reference answers and a score rubric are given.
1. Write brief feedback that assesses whether the central factual answer of the response is correct, strictly based on the score rubric.
2. Judge factual correctness only. Do not penalise the response for being written in a language other than {response_language}, or for mixing languages.
3. After the feedback, write a score that is an integer from 1 to 5, referring to the score rubric.
4. The output format must be: "Feedback: (your feedback) [RESULT] (an integer from 1 to 5)". Write nothing after the score.

###Question:
{question}

###Response to evaluate:
{response}

###Reference answer ({response_language}):
{reference}

###Reference answer (English):
{reference_en}

###Other accepted answers (English):
{aliases}

###Score rubric:
Is the central answer of the response factually correct?
Score 1: The answer is wrong, or there is no answer.
Score 2: The answer is mostly wrong; only a minor element matches the reference.
Score 3: The answer is partly correct, or too vague to count as correct.
Score 4: The answer is correct, with minor imprecision.
Score 5: The answer is fully correct: it matches the reference or an accepted answer.

###Feedback:`;
