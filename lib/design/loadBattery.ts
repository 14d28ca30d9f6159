import type { LoadedBattery } from './battery.js';
import type { Campaign } from './campaign.js';
import { loadFar6Battery } from '../batteries/far6/loadFar6Battery.js';

/** The battery a campaign names, with its design data loaded and validated. */
export async function loadBattery(campaign: Campaign): Promise<LoadedBattery> {
  switch (campaign.battery) {
    case 'far6':
      return loadFar6Battery(campaign);
  }
}
