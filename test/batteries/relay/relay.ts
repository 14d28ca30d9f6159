/**
 * `relay`: a test fixture, not a template (the template is `sondage new battery`'s output): a battery
 * that proves the contract's dependent phases with nothing of FAR-6, X-Value or P(True) in it.
 * Two phases: `guess` asks the model under test for a whole number per slot;
 * `double` is built from guess's numeric readings (one item per number read) and asks for twice the
 * number. Its analysis joins the two phases' readings in its own SQL and scores the doubling; its
 * simulated models double wrongly at a known rate, so a test can check the estimate against the truth.
 *
 * Why it stays beside the scaffold (templates/battery/, `sondage new battery`): the scaffold is the
 * smallest study a researcher starts from, one phase; relay is the contract test of a phase graph,
 * a dependent phase expanded from an earlier phase's readings, run locally, in partition threads and
 * through the state machine (test/infra/pipelineRun.test.ts). Like a battery of one's own, it
 * imports sondage only through the public entry (lib/api/battery.ts), so it also proves that
 * entry is enough for a multi-phase battery.
 */
import {
  CampaignFileError,
  SqlLibrary,
  columnDefs,
  defineBattery,
  stableId,
  toCsv,
  uniformFromKey,
  z,
} from '../../../lib/api/battery.js';
import type { BatteryAnalysis, PartitionContext, PhaseSpec, PromptItem, ReadingDraft, ReplyView, SimulatorFactory, Upstream } from '../../../lib/api/battery.js';

export const RELAY_LANGUAGES = ['en', 'fr'] as const;

export const relayDesignSchema = z.strictObject({
  slots: z.int().min(1).max(10_000).default(5).describe('numbers asked per model and language'),
  languages: z.array(z.enum(RELAY_LANGUAGES)).min(1).default([...RELAY_LANGUAGES]),
});
export type RelayDesign = z.output<typeof relayDesignSchema>;

type RelayItem = PromptItem<{ slot: number; given: number | null }, Record<string, never>>;

const ASK = { en: (slot: number) => `Slot ${slot}: name one whole number from 1 to 99. Answer with the number only.`, fr: (slot: number) => `Case ${slot} : donnez un nombre entier de 1 à 99. Répondez par le nombre seul.` };
const DOUBLE = { en: (n: number) => `What is twice ${n}? Answer with the number only.`, fr: (n: number) => `Combien font deux fois ${n} ? Répondez par le nombre seul.` };

function item(p: PartitionContext, phase: string, slot: number, given: number | null, content: string, source?: string): RelayItem {
  const messages = [{ role: 'user' as const, content }];
  const factors = { slot, given };
  const item_id = stableId({ battery: 'relay', campaign: p.campaign.name, phase, model: p.answerer.id, language: p.language, factors, messages, settings: p.answerer.settings });
  return {
    item_id,
    prompt_key: item_id,
    campaign: p.campaign.name,
    phase,
    battery: 'relay',
    model: p.answerer.id,
    language: p.language,
    factors,
    messages,
    settings: p.answerer.settings,
    extras: {},
    ...(source === undefined ? {} : { source_item_id: source }),
  };
}

/** The number in a reply, as a `number` reading with its value; `invalid` when there is none. */
export function readNumber(_item: PromptItem, reply: ReplyView): ReadingDraft[] {
  const m = /-?\d+/.exec(reply.text ?? '');
  return [m ? { reader: 'number', label: 'ok', value: Number(m[0]), raw: m[0] } : { reader: 'number', label: 'invalid', value: null, raw: reply.text }];
}

function phases(design: RelayDesign): PhaseSpec[] {
  const guess: PhaseSpec = {
    name: 'guess',
    after: [],
    answeredBy: 'subject',
    settings: { max_tokens: 8 },
    *expand(p) {
      const lang = p.language as (typeof RELAY_LANGUAGES)[number];
      for (let slot = 1; slot <= design.slots; slot++) yield item(p, 'guess', slot, null, ASK[lang](slot));
    },
    read: readNumber,
    expectedOutputTokens: () => 2,
  };
  const double: PhaseSpec = {
    name: 'double',
    after: [{ phase: 'guess', take: ['readings'], readers: ['number'] }],
    answeredBy: 'subject',
    settings: { max_tokens: 8 },
    *expand(p, up: Upstream) {
      const lang = p.language as (typeof RELAY_LANGUAGES)[number];
      for (const source of p.items('guess') as readonly RelayItem[]) {
        const reading = up.readings('guess', source.item_id).find((r) => r.reader === 'number' && r.label === 'ok');
        if (reading?.value == null) continue;
        yield item(p, 'double', source.factors.slot, reading.value, DOUBLE[lang](reading.value), source.item_id);
      }
    },
    read: readNumber,
    estimate: (p) => {
      const n = p.items('guess').length;
      return { items: n, inputTokens: n * 12, outputTokens: n * 2, maxInputTokens: n * 16, maxOutputTokens: n * 8 };
    },
  };
  return [guess, double];
}

const RELAY_SQL = new SqlLibrary('relay', new URL('./sql/', import.meta.url), ['relay_doubles', 'relay_simulated']);

export interface RelayRow {
  readonly model: string;
  readonly language: string;
  readonly doubled: number;
  readonly correct: number;
  readonly accuracy: number;
}

export interface RelayResults {
  readonly rows: readonly RelayRow[];
  readonly simulated: boolean;
}

const sources = (s: Parameters<BatteryAnalysis['firstQuery']>[0]) => ({
  guess_readings: s.table('readings', ['guess']),
  guess_replies: s.table('replies', ['guess']),
  double_prompts: s.table('prompts', ['double']),
  double_readings: s.table('readings', ['double']),
});

const analysis: BatteryAnalysis<RelayResults> = {
  sql: RELAY_SQL,
  namedSources: {
    guess_readings: { table: 'readings', phases: ['guess'] },
    guess_replies: { table: 'replies', phases: ['guess'] },
    double_prompts: { table: 'prompts', phases: ['double'] },
    double_readings: { table: 'readings', phases: ['double'] },
  },
  firstQuery: (s) => RELAY_SQL.render('relay_doubles', sources(s)),
  async run(db, s) {
    const rows = (await RELAY_SQL.run<Record<string, unknown>>(db, 'relay_doubles', sources(s))).map((r) => ({
      model: String(r['model']),
      language: String(r['language']),
      doubled: Number(r['doubled']),
      correct: Number(r['correct']),
      accuracy: Number(r['correct']) / Number(r['doubled']),
    }));
    const [flag] = await RELAY_SQL.run<Record<string, unknown>>(db, 'relay_simulated', sources(s));
    return { rows, simulated: Number(flag?.['simulated'] ?? 0) === 1 };
  },
  files: (r, meta) => [
    ['relay.csv', toCsv(['model', 'language', 'doubled', 'correct', 'accuracy'], r.rows)],
    ['summary.md', `# relay: ${meta.campaign}${r.simulated ? ' (simulated)' : ''}\n\n${r.rows.map((x) => `- ${x.model} ${x.language}: ${x.correct}/${x.doubled}`).join('\n')}\n`],
  ],
  console: (r) => r.rows.map((x) => `${x.model} ${x.language} ${x.correct}/${x.doubled}`).join('\n'),
  simulated: (r) => r.simulated,
};

const simulationSchema = z.strictObject({ error_rate: z.number().min(0).max(1).default(0) });

/** A simulated model: a number per slot from the seed; its double wrong (off by one) at `error_rate`. */
export const relaySimulator: SimulatorFactory = (entry, ctx) => {
  const parsed = simulationSchema.safeParse(entry.simulation ?? {});
  if (!parsed.success) throw new CampaignFileError(`${entry.where.file}: ${entry.where.path}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const { error_rate } = parsed.data;
  return {
    effectsKey: `relay|${ctx.seed}|${entry.id}`,
    errorRate: 0,
    latencyMs: 0,
    reply(it) {
      const key = `${ctx.seed}|${entry.id}|${it.item_id}`;
      if (it.phase === 'guess') return { text: String(1 + Math.floor(uniformFromKey(key) * 99)) };
      const given = Number(it.factors['given']);
      return { text: String(2 * given + (uniformFromKey(`${key}|err`) < error_rate ? 1 : 0)) };
    },
  };
};

export const relay = defineBattery<RelayDesign>({
  name: 'relay',
  title: 'relay (tests only): a number, then twice that number',
  languages: RELAY_LANGUAGES,
  design: relayDesignSchema,
  roles: {},
  dataFiles: () => [],
  load: async (_campaign, design) => ({ languages: design.languages, phases: phases(design) }),
  prompts: { factors: columnDefs({ slot: ['INTEGER'], given: ['DOUBLE', 'null'] }), extras: [], extraRow: () => ({}) },
  vocabulary: { number: ['ok', 'invalid'] },
  phaseCatalog: [
    { name: 'guess', answeredBy: 'subject', after: [], readers: ['number'], description: 'a whole number per slot' },
    { name: 'double', answeredBy: 'subject', after: ['guess'], readers: ['number'], description: 'twice the number read in guess' },
  ],
  analysis,
  simulator: relaySimulator,
});
