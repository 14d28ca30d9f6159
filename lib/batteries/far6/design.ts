/**
 * FAR-6's section of the campaign file (Same Judgment, Different Yes §3, "Generation settings", "Sentence judging"):
 * the `design:` block, the judge role with its sample rate and audit, and the loading of the
 * stories and concept pairs it names.
 */
import path from 'node:path';
import { z } from 'zod';
import { enumOf, fromField, modelEntrySchema, relativePath, uniqueList } from '../../api/battery.js';
import type { CampaignCore, RoleEntry, RoleSpec } from '../../api/battery.js';
import { loadConceptPairs, loadStories } from './design/index.js';
import type { ConceptPair } from './design/index.js';
import { BOOTSTRAP_DRAWS, DEFAULT_IDENTITY_READOUTS } from './analysis/identity.js';
import { ANSWER_CONSTRAINTS, LANGUAGES, QUESTION_FORMS } from './types.js';
import type { AnswerConstraint, Far6Story, Language, QuestionForm } from './types.js';

/** The `design:` block of a FAR-6 campaign. */
export const far6DesignSchema = z.strictObject({
  stories: relativePath('stories.yaml'),
  concept_pairs: relativePath('concept-pairs.yaml'),
  languages: uniqueList(enumOf(LANGUAGES, 'language'), 'language').min(1),
  forms: uniqueList(enumOf(QUESTION_FORMS, 'question form'), 'question form')
    .min(1)
    .default([...QUESTION_FORMS]),
  constraints: uniqueList(enumOf(ANSWER_CONSTRAINTS, 'answer constraint'), 'answer constraint')
    .min(1)
    .default([...ANSWER_CONSTRAINTS]),
  repeats: z
    .strictObject({
      count: z.int().min(1).max(100).meta({ description: 'Generations of each repeated prompt' }),
      fraction: z.number().min(0).max(1).meta({ description: 'Share of prompts that are repeated' }),
    })
    .default({ count: 3, fraction: 0.25 }),
  story_limit: z.int().min(1).optional().meta({ description: 'Only the first N stories, for quick runs' }),
  analysis: z
    .strictObject({
      identity_readouts: z
        .array(z.string().min(1))
        .min(1)
        .default([...DEFAULT_IDENTITY_READOUTS])
        .meta({
          description:
            'Readouts the model-identity analysis compares (Same Judgment, Different Yes §5), as form/constraint/reader; `*` at the end matches a prefix (`plain/free/judge:*`). Default: plain/label/rule and plain/free/judge:*',
        }),
      bootstrap_draws: z.int().min(1).max(100_000).default(BOOTSTRAP_DRAWS).meta({ description: 'Story-bootstrap draws of the identity intervals (Same Judgment, Different Yes "Estimation steps": 300)' }),
    })
    .prefault({})
    .meta({ description: 'Choices of the analysis the paper fixes and a study may vary' }),
});

/** A parsed FAR-6 design (paths as written, relative to the campaign file). */
export type Far6DesignSpec = z.output<typeof far6DesignSchema>;

/** Same Judgment, Different Yes "Sentence judging": 4,590 audited replies over 153 strata, 30 per stratum. */
export const DEFAULT_AUDIT_PER_STRATUM = 30;

const judgeAuditSchema = z
  .strictObject({
    per_stratum: z
      .int()
      .min(1)
      .max(1_000_000)
      .default(DEFAULT_AUDIT_PER_STRATUM)
      .meta({ description: 'Judged replies drawn per stratum (model × language × answer constraint)' }),
    seed: z
      .int()
      .min(0)
      .max(2 ** 32 - 1)
      .optional()
      .meta({ description: "Seed of the sample; default: the campaign's seed" }),
    retest: z.boolean().default(true).meta({ description: 'The primary judge reads the sample again (test–retest)' }),
    second_judge: modelEntrySchema.optional().meta({ description: 'A second judge model that reads the same sample' }),
  })
  .superRefine((audit, ctx) => {
    if (!audit.retest && audit.second_judge === undefined) {
      ctx.addIssue({ code: 'custom', path: [], input: audit, message: 'asks for nothing: set retest: true, add a second_judge, or remove the audit block' });
    }
  })
  .meta({ description: 'Judge audit (Same Judgment, Different Yes "Sentence judging"): a second judge and a retest on a seeded, stratified sample' });

/** The judge role's fields besides its model entry. */
const judgeExtras = {
  sample_rate: z
    .number()
    .min(0)
    .max(1)
    .default(0.04)
    .meta({ description: 'Share of the other yes/no-first and label replies that are judged (Same Judgment, Different Yes "Judged coverage")' }),
  audit: judgeAuditSchema.optional(),
};

/** The sentence judge and the audit's second judge (Same Judgment, Different Yes "Sentence judging"). */
export const FAR6_ROLES: Readonly<Record<string, RoleSpec>> = {
  judge: { required: true, description: 'the sentence judge: reads the judged replies with the four-way codebook', extras: judgeExtras },
  second_judge: {
    required: false,
    at: ['judge', 'audit', 'second_judge'],
    description: 'the judge audit\'s second judge: reads the audit sample again',
  },
};

/**
 * Same Judgment, Different Yes "Sentence judging": a seeded sample of judged replies, stratified by model × language ×
 * answer constraint, re-judged by a second judge model and by the same judge again (test–retest).
 */
export interface JudgeAudit {
  /** Replies drawn per stratum (fewer where the stratum holds fewer judged replies). */
  readonly per_stratum: number;
  /** Seed of the draw: the campaign's seed unless the file names one. */
  readonly seed: number;
  /** Whether the primary judge reads the sample a second time. */
  readonly retest: boolean;
  /** Whether a second judge reads it (`judge.audit.second_judge`). */
  readonly secondJudge: boolean;
}

/** The judge role's extras as FAR-6 uses them. */
export function judgeSettingsOf(campaign: CampaignCore): { readonly judge: RoleEntry; readonly sampleRate: number; readonly audit?: JudgeAudit } | undefined {
  const judge = campaign.roles['judge'];
  if (!judge) return undefined;
  const extras = judge.extras as { sample_rate?: number; audit?: { per_stratum: number; seed?: number; retest: boolean; second_judge?: unknown } };
  const audit = extras.audit;
  return {
    judge,
    sampleRate: extras.sample_rate ?? 0,
    ...(audit
      ? { audit: { per_stratum: audit.per_stratum, seed: audit.seed ?? campaign.seed, retest: audit.retest, secondJudge: audit.second_judge !== undefined } }
      : {}),
  };
}

/** The files a FAR-6 design names, relative to the campaign file. */
export function far6DataFiles(design: Far6DesignSpec): { field: string; file: string }[] {
  return [
    { field: 'design.stories', file: design.stories },
    { field: 'design.concept_pairs', file: design.concept_pairs },
  ];
}

/** A FAR-6 design with its stories and concept pairs read and checked. */
export interface Far6Data {
  readonly languages: readonly Language[];
  readonly forms: readonly QuestionForm[];
  readonly constraints: readonly AnswerConstraint[];
  readonly repeats: { readonly count: number; readonly fraction: number };
  readonly stories: readonly Far6Story[];
  readonly pairsByLanguage: ReadonlyMap<Language, readonly ConceptPair[]>;
}

/** Reads the stories (the first `story_limit`) and concept pairs a design names; errors name the file and the entry. */
export async function loadFar6Data(campaign: CampaignCore, design: Far6DesignSpec): Promise<Far6Data> {
  const languages = [...design.languages];
  const allStories = await fromField(campaign.file, 'design.stories', () => loadStories(path.resolve(campaign.folder, design.stories), languages));
  const stories = design.story_limit ? allStories.slice(0, design.story_limit) : allStories;
  const pairs = await fromField(campaign.file, 'design.concept_pairs', () => loadConceptPairs(path.resolve(campaign.folder, design.concept_pairs), languages));
  const pairsByLanguage = new Map<Language, ConceptPair[]>();
  for (const p of pairs) pairsByLanguage.set(p.language, [...(pairsByLanguage.get(p.language) ?? []), p]);
  return { languages, forms: [...design.forms], constraints: [...design.constraints], repeats: design.repeats, stories, pairsByLanguage };
}
