/**
 * What both ledgers (EmbeddedLedger, DynamoLedger) check and refuse the same way: the Ledger
 * contract of types.ts promises one behaviour whatever the backend, so its amounts, the rounding
 * slack of the cap check and the words of its refusals live once, here, not once per backend.
 */
import { SondageError } from '../errors.js';
import { PartCommittedError } from './errors.js';

/** Rounding slack of the cap check, so a reservation of exactly the remaining budget passes. */
export const CAP_TOLERANCE_USD = 1e-12;

/** Refuses an amount of money that is not a finite number ≥ 0 (a cap, a reservation, a cost). */
export function assertAmount(what: string, amount: number): void {
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) {
    throw new SondageError(`${what} must be a finite number of USD ≥ 0, got ${String(amount)}`);
  }
}

/** A reservation id used twice (Ledger.reserve). */
export function duplicateReservation(campaign: string, reservationId: string): SondageError {
  return new SondageError(`reservation ${JSON.stringify(reservationId)} of campaign ${JSON.stringify(campaign)} already exists; reservation ids must be unique`);
}

/** A part committed twice (Ledger.commitPart). */
export function partCommitted(campaign: string, phase: string, partKey: string): PartCommittedError {
  return new PartCommittedError(
    `part ${partKey} of campaign ${JSON.stringify(campaign)} phase ${JSON.stringify(phase)} is already committed; ` +
      'a part is adopted once (write new replies to a new part name)',
    partKey,
  );
}
