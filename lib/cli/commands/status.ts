import { SondageError } from '../../errors.js';
import type { CliArgs } from '../main.js';

/** `sondage status` (being written: issue 4). */
export async function statusCommand(args: CliArgs): Promise<number> {
  throw new SondageError(`sondage status ${args.file}: not built yet`);
}
