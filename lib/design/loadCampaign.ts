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
  const { value: raw, lineOf } = parseYamlFile(file, text);
  const result = checkCampaign(raw, file, options);
  if (result.ok) return result.campaign;
  // In file order, so the list reads top to bottom with the file open beside it.
  return fail(withLines<CampaignIssue>(result.issues, lineOf));
}
