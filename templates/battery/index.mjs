/**
 * __NAME__: a sondage battery (docs/writing-a-battery.md in the sondage package).
 *
 * A starting point written by `sondage new battery __NAME__`: one phase, `answer`, asks each model
 * under test every question of items.jsonl in each language of the design, `repeats` times; a
 * fixed rule reads the first whole number of the reply and scores it against the item's answer.
 * The analysis (sql/__NAME___scores.sql) gives accuracy per model and language; the simulated
 * models answer right at their `simulation.accuracy`, which simulation_truth.json records, so the
 * test beside this file can check that the analysis recovers what was simulated.
 *
 * Change the questions, the prompt, the reader and the SQL to make it your study. Everything comes
 * from one entry, `sondage/battery`; TypeScript works too: rename to index.mts (or to index.ts
 * where the package.json above says "type": "module"; Node reads a plain .ts as CommonJS otherwise).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CampaignFileError, SqlLibrary, columnDefs, defineBattery, htmlTable, mdTable, renderReportPage, stableId, toCsv, uniformFromKey, z } from 'sondage/battery';

const NAME = '__NAME__';
const LANGUAGES = /** @type {const} */ (['en', 'fr']);

/** The `design:` section of a campaign file. */
const design = z.strictObject({
  items: z.string().default('items.jsonl').describe('questions with their answers, one JSON object per line, relative to the campaign file'),
  languages: z.array(z.enum(LANGUAGES)).min(1).default([...LANGUAGES]),
  repeats: z.int().min(1).max(100).default(1).describe('times each question is asked'),
});

/**
 * Reads items.jsonl: `{"id": "...", "question": {"en": "...", "fr": "..."}, "answer": 12}` per line.
 * Every problem names the file, the line and the field.
 * @returns {Promise<{ id: string, question: Record<string, string>, answer: number }[]>}
 */
async function readItems(file, languages) {
  let text;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new CampaignFileError(`${file}: design.items: no such file (expected questions, one JSON object per line)`);
  }
  const items = [];
  const seen = new Set();
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const where = `${file}:${i + 1}`;
    let row;
    try {
      row = JSON.parse(line);
    } catch {
      throw new CampaignFileError(`${where}: not a JSON object`);
    }
    if (typeof row?.id !== 'string' || row.id === '') throw new CampaignFileError(`${where}: id: expected a non-empty string`);
    if (seen.has(row.id)) throw new CampaignFileError(`${where}: id: "${row.id}" is used twice`);
    seen.add(row.id);
    if (!Number.isInteger(row.answer)) throw new CampaignFileError(`${where}: answer: expected a whole number`);
    for (const lang of languages) {
      if (typeof row.question?.[lang] !== 'string' || row.question[lang] === '') throw new CampaignFileError(`${where}: question.${lang}: expected the question in ${lang}`);
    }
    items.push({ id: row.id, question: row.question, answer: row.answer });
  }
  if (items.length === 0) throw new CampaignFileError(`${file}: design.items: the file holds no question`);
  return items;
}

const INSTRUCTION = { en: 'Answer with a whole number only.', fr: 'Répondez par un nombre entier seulement.' };

/** The rule: the first whole number of the reply, scored against the item's answer. */
function readAnswer(item, reply) {
  const m = /-?\d+/.exec(reply.text ?? '');
  if (!m) return [{ reader: 'rule', label: 'unreadable', value: null, raw: reply.text }];
  const given = Number(m[0]);
  return [{ reader: 'rule', label: given === item.extras.answer ? 'correct' : 'incorrect', value: given, raw: m[0] }];
}

/** @returns {import('sondage/battery').PhaseSpec[]} */
function phases(items, repeats) {
  return [
    {
      name: 'answer',
      after: [],
      answeredBy: 'subject',
      settings: { max_tokens: 16 },
      // Bump when readAnswer changes: stored readings are then read again from the stored replies.
      readerVersion: '1',
      *expand(p) {
        for (const it of items) {
          for (let repeat = 1; repeat <= repeats; repeat++) {
            const messages = [{ role: 'user', content: `${it.question[p.language]}\n${INSTRUCTION[p.language]}` }];
            const factors = { question: it.id, repeat };
            // The answer is an extra, not a factor: correcting it re-reads stored replies instead of asking again.
            const item_id = stableId({ battery: NAME, campaign: p.campaign.name, model: p.answerer.id, language: p.language, factors, messages, settings: p.answerer.settings });
            yield { item_id, prompt_key: item_id, campaign: p.campaign.name, phase: 'answer', battery: NAME, model: p.answerer.id, language: p.language, factors, messages, settings: p.answerer.settings, extras: { answer: it.answer } };
          }
        }
      },
      read: readAnswer,
      expectedOutputTokens: () => 3,
    },
  ];
}

const SQL = new SqlLibrary(NAME, new URL('./sql/', import.meta.url), [`${NAME}_scores`, `${NAME}_simulated`]);
const sources = (s) => ({ readings: s.table('readings', ['answer']), replies: s.table('replies', ['answer']) });

/** Simulated models: right at `simulation.accuracy` (default 0.8), otherwise one off. */
const simulation = z.strictObject({ accuracy: z.number().min(0).max(1).default(0.8) });
const accuracyOf = (model) => simulation.parse(model.simulation ?? {}).accuracy;

export default defineBattery({
  name: NAME,
  title: `${NAME}: questions with a numeric answer, scored by a fixed rule`,
  languages: LANGUAGES,
  design,
  roles: {},
  dataFiles: (d) => [{ field: 'design.items', file: d.items }],
  async load(campaign, d) {
    const items = await readItems(path.resolve(campaign.folder, d.items), d.languages);
    return {
      languages: d.languages,
      phases: phases(items, d.repeats),
      simulationTruth: (models) => ({ accuracy: Object.fromEntries(models.map((m) => [m.id, accuracyOf(m)])) }),
    };
  },
  prompts: { factors: columnDefs({ question: ['VARCHAR'], repeat: ['INTEGER'] }), extras: columnDefs({ answer: ['INTEGER'] }), extraRow: (item) => ({ answer: item.extras.answer }) },
  vocabulary: { rule: ['correct', 'incorrect', 'unreadable'] },
  phaseCatalog: [{ name: 'answer', answeredBy: 'subject', after: [], readers: ['rule'], description: 'each question, in each language, read by the first whole number' }],
  analysis: {
    sql: SQL,
    namedSources: { readings: { table: 'readings', phases: ['answer'] }, replies: { table: 'replies', phases: ['answer'] } },
    firstQuery: (s) => SQL.render(`${NAME}_scores`, sources(s)),
    async run(db, s) {
      const rows = (await SQL.run(db, `${NAME}_scores`, sources(s))).map((r) => ({
        model: String(r.model),
        language: String(r.language),
        replies: Number(r.replies),
        correct: Number(r.correct),
        unreadable: Number(r.unreadable),
        accuracy: Number(r.replies) > 0 ? Number(r.correct) / Number(r.replies) : null,
      }));
      const [flag] = await SQL.run(db, `${NAME}_simulated`, sources(s));
      return { rows, simulated: Number(flag?.simulated ?? 0) === 1 };
    },
    files: (r, meta) => {
      const columns = ['model', 'language', 'replies', 'correct', 'unreadable', 'accuracy'];
      const table = mdTable(columns, r.rows.map((x) => columns.map((c) => (c === 'accuracy' && x.accuracy !== null ? x.accuracy.toFixed(3) : String(x[c] ?? '–')))));
      const rows = r.rows.map((x) => columns.map((c) => (c === 'accuracy' && x.accuracy !== null ? x.accuracy.toFixed(3) : String(x[c] ?? '–'))));
      // report.html: sondage's report shell draws the header (campaign, models, spend against the cap), the navigation and the file list.
      const report = renderReportPage(
        {
          study: NAME,
          simulated: r.simulated,
          models: [...new Set(r.rows.map((x) => x.model))],
          design: [['Languages', [...new Set(r.rows.map((x) => x.language))].join(', ')]],
          sections: [{ id: 'scores', title: 'Accuracy per model and language', body: [htmlTable({ caption: 'Accuracy per model and language', header: columns, rows, csv: 'scores.csv' })] }],
          files: ['scores.csv', 'summary.md'],
        },
        meta,
      );
      return [
        ['scores.csv', toCsv(columns, r.rows)],
        ['summary.md', `# ${NAME}: ${meta.campaign}${r.simulated ? ' (SIMULATED)' : ''}\n\nAccuracy per model and language (scores.csv).\n\n${table}\n`],
        ['report.html', report],
      ];
    },
    console: (r) => r.rows.map((x) => `${x.model} ${x.language}: ${x.correct}/${x.replies} correct${x.unreadable > 0 ? `, ${x.unreadable} unreadable` : ''}`).join('\n'),
    simulated: (r) => r.simulated,
  },
  simulator(entry, ctx) {
    const parsed = simulation.safeParse(entry.simulation ?? {});
    if (!parsed.success) throw new CampaignFileError(`${entry.where.file}: ${entry.where.path}.simulation: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    const { accuracy } = parsed.data;
    return {
      effectsKey: `${NAME}|${ctx.seed}|${entry.id}`,
      errorRate: 0,
      latencyMs: 0,
      reply(item) {
        const right = uniformFromKey(`${ctx.seed}|${entry.id}|${item.item_id}`) < accuracy;
        return { text: String(item.extras.answer + (right ? 0 : 1)) };
      },
    };
  },
});
