import type { RunContext } from '../run/context.js';

/** Prints what the battery found in the design's data that does not stop the run (plan, run, start). */
export function printDesignWarnings(ctx: Pick<RunContext, 'design'>, out: NodeJS.WritableStream = process.stderr): void {
  const warnings = ctx.design.warnings ?? [];
  const shown = warnings.slice(0, 20);
  for (const w of shown) out.write(`warning: ${w}\n`);
  if (warnings.length > shown.length) out.write(`warning: … and ${warnings.length - shown.length} more like these\n`);
}
