/**
 * Node's fetch (undici) ends a request whose response headers take more than 300 s, or whose body
 * pauses that long, whatever the SDK's own timeout says: a reasoning model that thinks for six
 * minutes before its reply was cut at five, as a "timeout", before the run's attempt timeout or
 * the SDK's could fire. The SDKs take a `fetch`; this one sends each request through an undici
 * Agent whose header and body timeouts follow the SDK's.
 *
 * The Agent class is the one behind Node's own fetch (its global dispatcher, kept under
 * `Symbol.for('undici.globalDispatcher.1')`, where every copy of undici shares it), so that no second copy of undici is
 * bundled; where that dispatcher is not a plain Agent (a proxy set by the user), requests keep it
 * and its timeouts, and an attempt its transport ends is still counted as possibly billed
 * (callWithRetry counts every `timeout` as sent and unanswered).
 */

import { attemptTimeoutMs, sdkTimeoutMs } from './attemptTimeouts.js';

const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

type AgentClass = new (options: { headersTimeout: number; bodyTimeout: number }) => object;

let agentClass: Promise<AgentClass | undefined> | undefined;
const agents = new Map<number, object>();

/** The class of Node's global fetch dispatcher when it is a plain undici Agent. */
async function findAgentClass(): Promise<AgentClass | undefined> {
  const global = globalThis as unknown as Record<symbol, unknown>;
  // Node sets its dispatcher at the first fetch: a data: URL loads it without any network.
  if (global[GLOBAL_DISPATCHER] === undefined) await fetch('data:,').then((r) => r.arrayBuffer()).catch(() => undefined);
  const dispatcher = global[GLOBAL_DISPATCHER];
  const ctor = (dispatcher as { constructor?: unknown } | undefined)?.constructor;
  return typeof ctor === 'function' && ctor.name === 'Agent' ? (ctor as AgentClass) : undefined;
}

/** The Agent whose header and body timeouts are `timeoutMs` (one per value: each keeps a pool of connections). */
export async function transportAgent(timeoutMs: number): Promise<object | undefined> {
  const Agent = await (agentClass ??= findAgentClass());
  if (Agent === undefined) return undefined;
  let agent = agents.get(timeoutMs);
  if (agent === undefined) agents.set(timeoutMs, (agent = new Agent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs })));
  return agent;
}

/**
 * A fetch for an SDK client whose transport waits `timeoutMs` for headers and between body chunks.
 *
 * @example new OpenAI({ timeout: 690_000, fetch: fetchWithTimeouts(691_000) })
 */
export function fetchWithTimeouts(timeoutMs: number, base: typeof fetch = (input, init) => fetch(input, init)): typeof fetch {
  return async (input, init) => {
    const dispatcher = await transportAgent(timeoutMs);
    return base(input, dispatcher === undefined ? init : ({ ...init, dispatcher } as RequestInit));
  };
}

/**
 * The timeout and fetch of an SDK client behind an attempt: the SDK's request timeout (`timeoutMs`,
 * from connectionOptions; the one behind the default attempt timeout when absent), and a transport
 * that waits a second longer, so that the SDK's own timeout error is the one an attempt ends with.
 */
export function sdkTransport(timeoutMs: number | undefined, base?: typeof fetch): { timeout: number; fetch: typeof fetch } {
  const timeout = timeoutMs ?? sdkTimeoutMs(attemptTimeoutMs(undefined));
  return { timeout, fetch: fetchWithTimeouts(timeout + 1_000, base) };
}
