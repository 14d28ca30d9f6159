/**
 * A battery loaded from the user's folder imports its helpers from `sondage/battery` (the public
 * entry, lib/api/battery.ts). Those imports are routed to the copy of sondage that is running, not
 * to whatever copy Node's resolution would find from the battery's folder (none, in a folder
 * without node_modules; another version, in a project that installed one): one copy of the core
 * means one SqlLibrary, one error class, one registry. A Node module hook does it
 * (`module.register`, Node ≥ 20.6); it is installed once, before the first battery is imported.
 */
import { register } from 'node:module';
import path from 'node:path';

/** The specifiers a battery may import sondage by. */
export const PUBLIC_SPECIFIERS = ['sondage', 'sondage/battery'] as const;

let routed = false;

/**
 * The URL of the public entry: the `api/battery` entry of the clone's bundle when the code runs
 * from it (lib/core/sourceBundle.mjs says where), else the one beside this file: `.ts` when
 * running from source, `.js` compiled.
 */
export function publicEntryUrl(): string {
  // The key sourceBundle.mjs's PUBLIC_ENTRY sets.
  const bundled = (globalThis as Record<symbol, unknown>)[Symbol.for('sondage.sourceBundle.publicEntry')];
  if (typeof bundled === 'string') return bundled;
  const ext = path.extname(new URL(import.meta.url).pathname) || '.js';
  return new URL(`../api/battery${ext}`, import.meta.url).href;
}

/** Installs the resolve hook (idempotent). */
export function routeSelfReferences(): void {
  if (routed) return;
  routed = true;
  const hooks = `
const TARGET = ${JSON.stringify(publicEntryUrl())};
const NAMES = new Set(${JSON.stringify(PUBLIC_SPECIFIERS)});
export async function resolve(specifier, context, next) {
  if (NAMES.has(specifier)) return { url: TARGET, shortCircuit: true };
  return next(specifier, context);
}`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
}
