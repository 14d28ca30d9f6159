/**
 * One line per phase whose batch route asked items synchronously (Bedrock: Converse) because they
 * were fewer than a batch must hold: how many, why, and at which price. `run` prints it, so that a
 * spend above the plan's batch price is explained.
 */
export function syncRemainderNotices(phases: readonly { readonly phase: string; readonly syncRemainder?: { readonly items: number; readonly minRequests: number } }[]): string[] {
  return phases
    .filter((p) => (p.syncRemainder?.items ?? 0) > 0)
    .map(
      (p) =>
        `${p.phase}: ${p.syncRemainder!.items} item(s) of a batch model asked through its synchronous API (Bedrock: Converse) at the on-demand price, ` +
        `not the batch price: fewer than the ${p.syncRemainder!.minRequests} records a batch job must hold`,
    );
}
