import { loadBattery } from '../design/loadBattery.js';
import { loadCampaign } from '../design/loadCampaign.js';
import type { RunContext } from './runCampaign.js';

/** Reads and validates the campaign file and the battery's data; nothing is written. */
export async function loadRunContext(file: string, dataDir?: string): Promise<RunContext> {
  const campaign = await loadCampaign(file);
  const battery = await loadBattery(campaign);
  return { campaign, battery, dataDir: dataDir ?? campaign.data_dir };
}
