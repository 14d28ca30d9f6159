/**
 * Which replies stand behind a cell of a P(True) result table, for `sondage view`: a question ×
 * response × verifier language cell is the `verify` replies of that configuration (Disentangling
 * Question, Response, and Verifier Languages §3); compliance and scorer rows are about the
 * responses themselves, the `generate` replies.
 */
import type { BatteryView, ReplySelection } from '../../api/battery.js';

/** Result columns → prompt columns of the P(True) phases. */
const AXES: Readonly<Record<string, string>> = { q: 'question_language', r: 'response_language', v: 'verifier_language', benchmark: 'benchmark' };

/** Tables about the responses (generate), not their verification. */
const RESPONSE_TABLES = new Set(['compliance.csv', 'scorers.csv']);

export const ptrueView: BatteryView = {
  cellReplies(table, row): ReplySelection | undefined {
    const factors: Record<string, string> = {};
    for (const [column, factor] of Object.entries(AXES)) if (row[column]) factors[factor] = row[column];
    const model = row['model'] || undefined;
    // A row with nothing but the benchmark (a regime, a rank change) pools the whole campaign.
    if (!model && Object.keys(factors).filter((f) => f !== 'benchmark').length === 0) return undefined;
    const responses = RESPONSE_TABLES.has(table);
    if (responses) delete factors['verifier_language'];
    return { phases: [responses ? 'generate' : 'verify'], ...(model ? { model } : {}), factors };
  },
};
