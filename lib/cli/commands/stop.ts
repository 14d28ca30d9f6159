import { SondageError } from '../../errors.js';
import type { CliArgs } from '../main.js';

/** `sondage stop` (being written: issue 4). */
export async function stopCommand(args: CliArgs): Promise<number> {
  throw new SondageError(`sondage stop ${args.file}: not built yet`);
}
