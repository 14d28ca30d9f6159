import { campaignJsonSchemaText } from '../../design/campaign.js';

export async function schemaCommand(): Promise<number> {
  process.stdout.write(campaignJsonSchemaText());
  return 0;
}
