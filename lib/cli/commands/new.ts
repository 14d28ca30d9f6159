/**
 * `sondage new battery <name>`: copies the battery template (templates/battery/ in the package)
 * into <dir>/<name>/, with `__NAME__` replaced by the name in file names and contents. The result
 * plans, runs, analyses and tests at once (test/cli/newBattery.test.ts runs it).
 */
import { existsSync, statSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { batteryNamed, builtInBatteries } from '../../batteries/index.js';
import { SAFE_NAME } from '../../battery/defineBattery.js';
import { SondageError } from '../../errors.js';
import { packageRoot } from '../packageRoot.js';
import { shownPath } from '../shownPath.js';
import type { CliArgs } from '../args.js';

const PLACEHOLDER = /__NAME__/g;

export async function newCommand(args: Pick<CliArgs, 'file' | 'values' | 'create'>): Promise<number> {
  if (args.create !== undefined && args.create !== 'battery') throw new SondageError(notABattery(args.create));
  const name = args.file;
  if (!SAFE_NAME.test(name)) throw new SondageError(`sondage new battery: "${name}" is not a usable battery name; use lowercase letters, digits and "_", starting with a letter`);
  if (batteryNamed(name)) throw new SondageError(`sondage new battery: ${name} is the name of a built-in battery; choose another`);
  const dir = typeof args.values['dir'] === 'string' ? args.values['dir'] : '.';
  if (statSync(dir, { throwIfNoEntry: false })?.isDirectory() === false) {
    throw new SondageError(`sondage new battery: --dir ${shownPath(path.resolve(dir))} is a file, not a folder; give the folder to write ${name}/ in (it is made if missing)`);
  }
  const target = path.resolve(dir, name);
  if (existsSync(target) && (await readdir(target)).length > 0) throw new SondageError(`sondage new battery: ${shownPath(target)} exists and is not empty; nothing was written`);
  const template = fileURLToPath(new URL('templates/battery/', packageRoot()));
  const written = await copyTemplate(template, target, name);
  const rel = path.relative(process.cwd(), target) || '.';
  process.stdout.write(
    `wrote ${written.length} files to ${rel}/:\n${written.map((f) => `  ${f}`).join('\n')}\n\nnext:\n  cd ${rel}\n  npx sondage plan campaign.yaml\n  npx sondage run campaign.yaml\n  node --test\n`,
  );
  return 0;
}

/**
 * `sondage new <a built-in battery>` or `sondage new <a typo>`: new writes only a battery of one's own. A built-in
 * battery is started from its demo campaign; an unknown word is answered with the known batteries.
 */
function notABattery(word: string): string {
  const known = builtInBatteries().map((b) => b.name);
  const usage = 'sondage new writes a battery of your own: `sondage new battery <name>`';
  if (!known.includes(word)) return `sondage new: ${JSON.stringify(word)} is neither "battery" nor a known battery (${known.join(', ')}); ${usage}`;
  const demo = fileURLToPath(new URL(`examples/${word}/demo.yaml`, packageRoot()));
  const start = existsSync(demo) ? `start from its demo campaign, ${shownPath(demo)}: copy its folder, then \`sondage plan\` and \`sondage run\` the copy` : 'write a campaign file with `battery: ' + word + '` (`sondage schema` describes its fields)';
  return `sondage new: ${word} is a built-in battery and needs nothing written; to run it, ${start}. ${usage}`;
}

async function copyTemplate(from: string, to: string, name: string, rel = ''): Promise<string[]> {
  await mkdir(to, { recursive: true });
  const written: string[] = [];
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const targetName = entry.name.replace(PLACEHOLDER, name);
    if (entry.isDirectory()) {
      written.push(...(await copyTemplate(path.join(from, entry.name), path.join(to, targetName), name, path.join(rel, targetName))));
    } else {
      const text = (await readFile(path.join(from, entry.name), 'utf8')).replace(PLACEHOLDER, name);
      await writeFile(path.join(to, targetName), text, { flag: 'wx' });
      written.push(path.join(rel, targetName));
    }
  }
  return written.sort();
}
