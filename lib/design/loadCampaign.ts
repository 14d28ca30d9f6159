import path from 'node:path';
import { batterySourceOf, loadExternalBattery } from '../batteries/external.js';
import type { BatterySource } from '../batteries/external.js';
import { parseYamlFile, readTextFile, withLines } from '../core/fileText.js';
import { CampaignFileError, formatIssues } from '../errors.js';
import type { FileIssue } from '../errors.js';
import { checkCampaign } from './campaign.js';
import type { Campaign, CampaignIssue, ParseCampaignOptions } from './campaign.js';

function fail(issues: FileIssue[], cause?: unknown): never {
  throw new CampaignFileError(formatIssues(issues), issues, cause === undefined ? undefined : { cause });
}

/**
 * Reads and parses a campaign file. Every problem, YAML syntax (with line and column) or schema
 * (with path and line), comes back as one CampaignFileError.
 * @example const campaign = await loadCampaign('examples/<battery>/demo.yaml');
 */
export async function loadCampaign(file: string, options: ParseCampaignOptions = {}): Promise<Campaign> {
  const text = await readTextFile(file, 'campaign file', 'a campaign YAML file');
  // Syntax errors come back with line and column, and without the parser's excerpt of the file.
  const { value: parsed, lineOf } = parseYamlFile(file, text);
  // A battery named by a path or a package is loaded (and registered) first; the document is then
  // checked against its schema exactly as a built-in battery's would be.
  let raw = parsed;
  let source: BatterySource | undefined;
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw) && 'battery' in raw) {
    const value = (raw as Record<string, unknown>)['battery'];
    try {
      source = batterySourceOf(value, path.dirname(path.resolve(options.cwd ?? process.cwd(), file)));
      if (source) raw = { ...(raw as Record<string, unknown>), battery: (await loadExternalBattery(source)).name };
    } catch (err) {
      return fail(withLines<CampaignIssue>([{ file, path: 'battery', segments: ['battery'], message: (err as Error).message }], lineOf), err);
    }
  }
  const result = checkCampaign(raw, file, options);
  if (result.ok) return source ? { ...result.campaign, battery_source: source } : result.campaign;
  // In file order, so the list reads top to bottom with the file open beside it.
  return fail(withLines<CampaignIssue>(result.issues, lineOf));
}
