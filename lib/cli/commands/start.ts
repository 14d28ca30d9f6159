import { SondageError } from '../../errors.js';
import type { CliArgs } from '../main.js';

/** `sondage start` (being written: issue 4). */
export async function startCommand(args: CliArgs): Promise<number> {
  throw new SondageError(`sondage start ${args.file}: not built yet`);
}
