/**
 * What one shard of a worker invocation has in flight (a worker that throws mid-shard must
 * not lose replies it paid for). The runners start calls, part commits and reservations the
 * worker cannot see; these wrappers count them so that, after an error, the worker can wait until
 * nothing runs any more, commit the journals left in /tmp, and hand back the reservations of calls
 * whose cost that commit now counts, all in the same invocation.
 */
import type { Ledger } from '../store/types.js';
import { partNameOf } from './adoptJournals.js';
import { Semaphore } from './Semaphore.js';
import { sleep } from './sleep.js';

/** Consecutive idle looks, POLL_MS apart, before the shard is taken to be quiet. */
const QUIET_LOOKS = 5;
const POLL_MS = 20;

export class ShardWork {
  private active = 0;
  /** Reservations granted to this shard and neither settled by a commit nor released. */
  private readonly held = new Set<string>();
  private registered = false;
  /** Reservations of attempts sent and never answered, by the part their journal becomes, until that part is committed. */
  private readonly unanswered = new Map<string, number>();

  /**
   * Starts a new shard: what an earlier shard still holds (an open provider batch's reservation) is
   * not this one's. `registered`: the plan registered the shard's items (its partition's
   * registeredKey marker), so the runner's registration is skipped.
   */
  reset(registered: boolean): void {
    this.held.clear();
    this.unanswered.clear();
    this.registered = registered;
  }

  get reservations(): readonly string[] {
    return [...this.held];
  }

  /**
   * An attempt sent and never answered (runPartition's `onUnanswered`): the part made from
   * `journalPath` counts `reservedUsd` as possibly billed when it is committed; until then, this
   * shard does.
   */
  noteUnanswered(journalPath: string, reservedUsd: number): void {
    const part = partNameOf(journalPath);
    this.unanswered.set(part, (this.unanswered.get(part) ?? 0) + reservedUsd);
  }

  /** What attempts sent and never answered reserved, in parts not committed with it (their journals are adopted without it). */
  get unansweredUsd(): number {
    let sum = 0;
    for (const usd of this.unanswered.values()) sum += usd;
    return sum;
  }

  /** Counts a promise while it runs. */
  private track<T>(p: Promise<T>): Promise<T> {
    this.active++;
    return p.finally(() => this.active--);
  }

  /**
   * Every async method of `target` counted while it runs. Calls go to the target itself (its private
   * fields need it as `this`).
   */
  counted<T extends object>(target: T): T {
    return new Proxy(target, {
      get: (t, prop) => {
        const v: unknown = Reflect.get(t, prop, t);
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          const out: unknown = (v as (...a: unknown[]) => unknown).apply(t, args);
          return out instanceof Promise ? this.track(out) : out;
        };
      },
    });
  }

  /**
   * The ledger as the runners see it: counted, with the reservations it grants followed until a
   * commit settles them or a release hands them back, and registration skipped for a shard whose
   * items the plan registered (a second registration would read every item again for nothing).
   */
  ledger(inner: Ledger): Ledger {
    const base = this.counted(inner);
    return new Proxy(base, {
      get: (t, prop) => {
        const v: unknown = Reflect.get(t, prop, t);
        if (prop === 'registerItems' && this.registered) return async () => {};
        if (prop === 'reserve') {
          // The scope goes through: it is what `status --aws` counts as calls in flight.
          return async (...args: Parameters<Ledger['reserve']>) => {
            const ok = await (v as Ledger['reserve'])(...args);
            if (ok) this.held.add(args[1]);
            return ok;
          };
        }
        if (prop === 'commitPart') {
          return async (commit: Parameters<Ledger['commitPart']>[0]) => {
            await (v as Ledger['commitPart'])(commit);
            for (const id of commit.reservationIds ?? []) this.held.delete(id);
            this.unanswered.delete(commit.partKey.slice(commit.partKey.lastIndexOf('/') + 1));
          };
        }
        if (prop === 'release') {
          return async (campaign: string, id: string) => {
            await (v as Ledger['release'])(campaign, id);
            this.held.delete(id);
          };
        }
        return v;
      },
    });
  }

  /** The semaphore the runners take before each call, counting the calls it admits or queues. */
  semaphore(limit: number): Semaphore {
    const track = <T>(p: Promise<T>) => this.track(p);
    return new (class extends Semaphore {
      override run<T>(task: () => Promise<T>): Promise<T> {
        return track(super.run(task));
      }
    })(limit);
  }

  /**
   * Resolves once nothing counted has run for QUIET_LOOKS looks in a row (the gaps between a
   * call's end and its part's commit are a few event-loop turns, far below that), or after
   * `maxMs`; says whether it got quiet.
   */
  async quiet(maxMs: number): Promise<boolean> {
    let idle = 0;
    for (let waited = 0; waited <= maxMs; waited += POLL_MS) {
      idle = this.active === 0 ? idle + 1 : 0;
      if (idle >= QUIET_LOOKS) return true;
      await sleep(POLL_MS);
    }
    return false;
  }
}
