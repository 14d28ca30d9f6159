/**
 * The vocabulary of the FAR-6 analysis (Same Judgment, Different Yes §3): a *cell* is a model ×
 * language; a *readout* is question form × answer constraint × reader, written
 * `form/constraint/reader` (e.g. `negint/yesno/judge:sonnet`). Readers may contain `/`; forms and
 * constraints never do, so a readout splits at its first two slashes.
 */

/** `form/constraint/reader`. */
export type Readout = string;

export interface CellKey {
  readonly model: string;
  readonly language: string;
}
