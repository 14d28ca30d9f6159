import { rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { CampaignBusyError, RunLockedError } from './errors.js';
import { campaignPrefix } from './layout.js';
import { acquireRunLock } from './lock.js';
import type { RunLock } from './lock.js';
import type { CampaignGuard } from './purge.js';

/**
 * The local purge's guard: the campaign's run lock (lib/store/lock.ts), taken before anything is
 * looked at and held until the end, so a `sondage run` of the campaign neither runs during the
 * purge nor starts while the user reads what will be deleted. A live holder makes `enter` throw
 * CampaignBusyError; a lock left by a dead run is taken over. A campaign without a folder has no
 * lock to take (the lock lives in the folder, and a run creates the folder first). After a purge,
 * `leave` removes the emptied folder.
 *
 * @example await purgeCampaign({ campaign, sources, guard: runLockGuard('./data', campaign), confirm });
 */
export function runLockGuard(dataDir: string, campaign: string): CampaignGuard {
  const folder = path.join(path.resolve(dataDir), ...campaignPrefix(campaign).split('/').filter(Boolean));
  let lock: RunLock | undefined;
  return {
    async enter() {
      const exists = await stat(folder).then((s) => s.isDirectory(), () => false);
      if (!exists) return;
      try {
        lock = await acquireRunLock(dataDir, campaign, `purge-${process.pid}`);
      } catch (err) {
        if (!(err instanceof RunLockedError)) throw err;
        throw new CampaignBusyError(
          `nothing purged: ${err.message.replace(/; wait for it to finish.*$/, '')}; ` +
            `stop it first (\`sondage stop\`, or Ctrl-C in its terminal) and purge again once it has exited`,
          { cause: err },
        );
      }
    },
    async check() {
      // The lock is held: no run can have started since enter.
    },
    async leave(purged: boolean) {
      await lock?.release();
      lock = undefined;
      if (purged) {
        await rmdir(folder).catch((err: NodeJS.ErrnoException) => {
          // ENOTEMPTY: a run started the moment the lock was released; its files stay.
          if (err.code !== 'ENOENT' && err.code !== 'ENOTEMPTY') throw err;
        });
      }
    },
  };
}
