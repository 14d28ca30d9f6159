/**
 * What changed in a campaign's design since its last plan: the run says so before it asks anything. The run re-plans cleanly either way — new
 * items are asked, items the design dropped keep their replies and leave the analysis — so this is
 * information, not a refusal.
 */
import type { Plan } from './planCampaign.js';

const key = (p: { readonly model: string; readonly language: string }): string => `${p.model}/${p.language}`;

/** One line per change between two plans of the same campaign; none when the design is the same. */
export function describePlanChange(before: Plan, after: Plan): string[] {
  const lines: string[] = [];
  if (before.battery !== after.battery) lines.push(`the battery changed from ${before.battery} to ${after.battery}: the earlier replies are kept and not analysed`);
  const was = new Map((before.partitions ?? []).map((p) => [key(p), p]));
  const now = new Map((after.partitions ?? []).map((p) => [key(p), p]));
  const gone = [...was.keys()].filter((k) => !now.has(k));
  const added = [...now.keys()].filter((k) => !was.has(k));
  if (gone.length > 0) lines.push(`model × language partitions no longer in the campaign: ${gone.join(', ')} (their replies are kept and left out of the analysis)`);
  if (added.length > 0) lines.push(`new model × language partitions: ${added.join(', ')}`);
  const total = (plan: Plan, phase: string): number => (plan.partitions ?? []).reduce((n, p) => n + (p.items[phase] ?? 0), 0);
  for (const phase of [...new Set([...before.phases, ...after.phases])]) {
    const [b, a] = [total(before, phase), total(after, phase)];
    if (!after.phases.includes(phase)) lines.push(`phase ${phase} is no longer in the design (its replies are kept and left out of the analysis)`);
    else if (!before.phases.includes(phase)) lines.push(`new phase ${phase}: ${a} items`);
    else if (a !== b && !(after.dependent ?? []).includes(phase)) lines.push(`${phase}: ${b} → ${a} items (new ones are asked; those the design dropped keep their replies and leave the analysis)`);
  }
  return lines;
}
