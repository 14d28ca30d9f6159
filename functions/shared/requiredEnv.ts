/**
 * Reading an environment variable the stack sets. A module of its own, importing no SDK client, so
 * that a handler which needs only this (report, record-failure) does not bundle the stores of env.ts.
 */
import { SondageError } from '../../lib/errors.js';

/** The value of an environment variable the stack sets, or an error naming it. */
export function requiredEnv(name: string, handler: string): string {
  const value = process.env[name];
  if (!value) throw new SondageError(`${handler}: environment variable ${name} is not set (the stack sets it)`);
  return value;
}
