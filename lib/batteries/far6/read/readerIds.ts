/**
 * Reader ids as stored in the `reader` column of readings (DESIGN.md "Data contracts"): the fixed
 * token rule R, the extended verdict rule R+ (Same Judgment, Different Yes §3, Appendix A11; figures label them R and
 * R+), and `judge:<model id>` for the sentence judge.
 */
export const readerIds = { rule: 'rule', rulePlus: 'rule+' } as const;
export type RuleReaderId = (typeof readerIds)[keyof typeof readerIds];

/** @example judgeReaderId('sonnet') === 'judge:sonnet' */
export function judgeReaderId(judgeModel: string): `judge:${string}` {
  return `judge:${judgeModel}`;
}
