/** What the sweep's parts share: where the CLI is, the planted secret, the groups, a case and its outcome. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'bin/sondage.mjs');
/** Planted in files given by mistake; it must never come back in any output. */
export const SECRET = 'sk-proj-SWEEPSECRET0a1b2c3d4e5f60718293';
/** The exit codes docs/troubleshooting.md documents; any other is a crash. */
export const DOCUMENTED_EXITS = new Set([0, 1, 2, 3, 4, 5, 6, 7, 130]);
export const GROUPS = ['yaml', 'design', 'byo', 'flags', 'store'] as const;
export type Group = (typeof GROUPS)[number];

/** What an exit 0 must show: `refuse` (exit 0 is wrong), `same` (output equal to the baseline's), `same-or-refuse` (a refusal, or the baseline's output), `either`. */
export type Expect = 'refuse' | 'same' | 'same-or-refuse' | 'either';

export interface Case {
  readonly group: Group;
  readonly name: string;
  readonly expect: Expect;
  /** Prepares the case's folder; returns the argv (relative paths are inside the folder). */
  readonly setup: (dir: string) => Promise<string[]>;
  /** The baseline case whose output `same` compares against. */
  readonly baseline?: string;
  /** A name the refusal must contain (the file broken). */
  readonly names?: string;
  /** Result files to compare for `same` (under the folder); default: stdout. */
  readonly compare?: string;
}

export interface Outcome {
  readonly c: Case;
  readonly verdict: 'ok' | 'wrong' | 'vague' | 'crash' | 'hang' | 'secret';
  readonly code: number | string;
  readonly why: string;
  readonly argv: readonly string[];
  readonly dir: string;
  readonly fingerprint: string;
}
