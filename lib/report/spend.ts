/**
 * The campaign's spend against its cap, as report.html's header and each battery's summary.md show
 * it: the cost of every stored reply, and — where a provider reported more usage than its calls
 * reserved — how far that took spend past the cap and which model did it (docs/budget.md, "A
 * provider that reports more than was reserved").
 */

/** What a report knows of the spend; absent where no cap applies. */
export interface ReportSpend {
  readonly spentUsd: number;
  readonly capUsd: number;
  /** The ledger's record of usage above what calls reserved: the last model that did it, the excess added up. */
  readonly overrun?: { readonly model: string; readonly excessUsd: number };
}

/** Dollars with up to four decimals, as `status` prints them: `$0.0123`, `$5`. */
function usd(x: number): string {
  return `$${Number(x.toFixed(4))}`;
}

/** "$0.0123 of the $5 cap (0.2 %)", or what is known of it. */
export function spendText(spend: ReportSpend | undefined): string | undefined {
  if (!spend) return undefined;
  const share = spend.capUsd > 0 ? ` (${((spend.spentUsd / spend.capUsd) * 100).toFixed(1)} %)` : '';
  return `${usd(spend.spentUsd)} of the ${usd(spend.capUsd)} cap${share}`;
}

/**
 * The warning a report puts beside the spend when it went past the cap or a provider reported more
 * than was reserved; undefined otherwise. Stored replies are counted as the provider reported them
 * (money is never hidden), so the spend can pass the cap only this way.
 * @example spendWarning({ spentUsd: 5.2, capUsd: 5, overrun: { model: 'gpt', excessUsd: 0.3 } })
 * // 'PAST THE CAP by $0.2: gpt reported usage $0.3 past what its calls reserved'
 */
export function spendWarning(spend: ReportSpend | undefined): string | undefined {
  if (!spend) return undefined;
  const past = spend.spentUsd - spend.capUsd;
  const who = spend.overrun ? `${spend.overrun.model} reported usage ${usd(spend.overrun.excessUsd)} past what its calls reserved` : undefined;
  if (past > 0) return `PAST THE CAP by ${usd(past)}${who ? `: ${who}` : ''}`;
  return who === undefined ? undefined : `OVERRUN: ${who} (spend stayed within the cap)`;
}

/**
 * The spend as summary.md lines: `Spend: …`, and a bold quoted warning under it where spendWarning
 * has one. Empty where no cap applies.
 */
export function spendMarkdown(spend: ReportSpend | undefined): string[] {
  const text = spendText(spend);
  if (text === undefined) return [];
  const warning = spendWarning(spend);
  return [`Spend: ${text}`, ...(warning ? [`> **${warning}**`] : [])];
}
