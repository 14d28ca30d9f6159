import path from 'node:path';
import { allBatteries, batteryNamed, batteryNames } from '../../batteries/index.js';
import { batterySourceOf, loadExternalBattery, originOf } from '../../batteries/external.js';
import type { Battery } from '../../battery/types.js';
import { SondageError } from '../../errors.js';
import type { CliArgs } from '../args.js';

function answeredBy(a: Battery['phaseCatalog'][number]['answeredBy']): string {
  return a === 'subject' ? 'the model under test' : `the ${a.role}`;
}

/**
 * A label as the space-separated list shows it: quoted when it holds a space or a quote, so that
 * `Pass "Biased Prompting" "Factual Error" invalid` reads as four labels, not six.
 * @example labelText('Factual Error') // '"Factual Error"'
 */
export function labelText(label: string): string {
  return /[\s"]/.test(label) ? JSON.stringify(label) : label;
}

/** One battery as `sondage batteries` prints it. */
export function describeBattery(b: Battery): string {
  const lines = [`${b.name} — ${b.title}`, `  from: ${originOf(b)}`, `  languages: ${b.languages.join(' ')}`];
  const roles = Object.entries(b.roles);
  lines.push(`  roles: ${roles.length === 0 ? 'none (every phase is answered by the model under test)' : roles.map(([r, s]) => `${r}${s.required ? '' : ' (optional)'}: ${s.description}`).join('; ')}`);
  lines.push('  phases:');
  for (const p of b.phaseCatalog) {
    const after = p.after.length > 0 ? `, after ${p.after.join(' and ')}` : '';
    lines.push(`    ${p.name}${p.optional ? ' (some designs)' : ''}: answered by ${answeredBy(p.answeredBy)}${after}; read by ${p.readers.join(', ')}`);
    lines.push(`      ${p.description}`);
  }
  lines.push('  readers and their labels:');
  for (const [reader, all] of Object.entries(b.vocabulary)) {
    const labels = all.map(labelText);
    lines.push(`    ${reader}: ${labels.length > 12 ? `${labels.slice(0, 12).join(' ')} … (${labels.length})` : labels.join(' ')}`);
  }
  if (b.byo) {
    lines.push(`  replies from elsewhere: ${b.byo.format}`);
    for (const [name, input] of Object.entries(b.byo.inputs ?? {})) lines.push(`    --input ${name}=FILE${input.required ? '' : ' (optional)'}: ${input.description}`);
  } else {
    lines.push('  replies from elsewhere: not taken');
  }
  return lines.join('\n');
}

/**
 * `sondage batteries [NAME | PATH]`: every battery, or one, with where it comes from, its phases,
 * languages, readers and roles. A PATH (`./studies/likert/`) loads a battery of one's own first.
 */
export async function batteriesCommand(args: Pick<CliArgs, 'file'>): Promise<number> {
  const source = batterySourceOf(args.file, process.cwd());
  if (source) {
    const battery = await loadExternalBattery(source);
    process.stdout.write(`${describeBattery(battery)}\n`);
    return 0;
  }
  const chosen = args.file === '' ? allBatteries() : [batteryNamed(args.file)];
  if (chosen[0] === undefined) throw new SondageError(`sondage batteries: no battery named "${args.file}"; sondage knows ${batteryNames().join(', ')}; a battery of your own is named by its path (${path.join('.', 'studies', 'likert')}${path.sep})`);
  process.stdout.write(`${(chosen as Battery[]).map(describeBattery).join('\n\n')}\n`);
  return 0;
}
