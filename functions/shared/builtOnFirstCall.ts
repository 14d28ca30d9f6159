import type { Context } from 'aws-lambda';

/** A handler as Lambda calls it. */
export type LambdaEntry<R> = (event: unknown, context: Context) => Promise<R>;

/**
 * A Lambda entry point whose handler `build` makes at the first invocation and keeps for the
 * container's life: the environment is read and the clients made once per cold start, and not
 * when the module is imported (a test imports it before it sets the environment).
 */
export function builtOnFirstCall<R>(build: () => LambdaEntry<R>): LambdaEntry<R> {
  let built: LambdaEntry<R> | undefined;
  return (event, context) => (built ??= build())(event, context);
}
