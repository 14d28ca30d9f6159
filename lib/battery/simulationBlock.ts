import type { z } from 'zod';
import { CampaignFileError, formatIssues } from '../errors.js';
import type { FileIssue } from '../errors.js';
import type { ConfigLocation } from '../providers/simulated/types.js';
import { genericError } from './schemas.js';

/**
 * Checks a simulated model's `simulation:` block against the battery's schema and applies its
 * defaults. A bad block is one CampaignFileError with an issue per problem, each naming the
 * campaign file and the full path (`models[0].simulation.keying_bias`) in the same words as the
 * rest of the campaign file's checks; the campaign loader runs it too, so `plan` refuses what
 * `run` would.
 * @example parseSimulationBlock(mySchema, entry.simulation, entry.where)
 */
export function parseSimulationBlock<S extends z.ZodType>(schema: S, raw: unknown, where: ConfigLocation): z.output<S> {
  const result = schema.safeParse(raw ?? {}, { error: genericError });
  if (result.success) return result.data;
  const issues: FileIssue[] = result.error.issues.flatMap((issue) => {
    const at = (extra: readonly PropertyKey[] = []) => [where.path, ...issue.path.map(String), ...extra.map(String)].filter((p) => p !== '').join('.');
    if (issue.code === 'unrecognized_keys') {
      const known = issue.path.length === 0 ? knownKeys(schema) : [];
      return issue.keys.map((key) => ({ file: where.file, path: at([key]), message: `unknown key${known.length > 0 ? `; known keys here: ${known.join(', ')}` : ''}` }));
    }
    return [{ file: where.file, path: at(), message: issue.message }];
  });
  throw new CampaignFileError(`invalid simulation settings:\n${formatIssues(issues)}`, issues);
}

function knownKeys(schema: z.ZodType): string[] {
  const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape) : [];
}
