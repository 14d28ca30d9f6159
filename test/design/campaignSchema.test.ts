import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { campaignJsonSchema, campaignJsonSchemaText } from '../../lib/design/campaign.js';
import { loadCampaign } from '../../lib/design/loadCampaign.js';
import { batteryNames } from '../../lib/batteries/index.js';
import { batterySourceOf } from '../../lib/batteries/external.js';

const ROOT = path.join(import.meta.dirname, '..', '..');

/** Every YAML file under `dir` (recursively) whose top level names a battery: a campaign file. */
async function campaignFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  const out: string[] = [];
  for (const e of entries) {
    if (!e.isFile() || !/\.ya?ml$/.test(e.name)) continue;
    const file = path.join(e.parentPath, e.name);
    let doc: unknown;
    try {
      doc = parse(await readFile(file, 'utf8'));
    } catch {
      continue;
    }
    if (typeof doc === 'object' && doc !== null && 'battery' in doc) out.push(file);
  }
  return out.sort();
}

const examples = await campaignFiles(path.join(ROOT, 'examples'));
const validFixtures = ['minimal.yaml', 'full.yaml'].map((f) => path.join(ROOT, 'test', 'fixtures', 'campaigns', f));

describe('campaign JSON Schema', () => {
  it('matches the committed schema/campaign.schema.json (regenerate: see the file header of this test)', async () => {
    // Regenerate with:
    // npx tsx -e "import('./lib/design/campaign.ts').then((m) => process.stdout.write(m.campaignJsonSchemaText()))" > schema/campaign.schema.json
    const committed = await readFile(path.join(ROOT, 'schema', 'campaign.schema.json'), 'utf8');

    expect(committed).toBe(campaignJsonSchemaText());
  });

  it('describes the input, one alternative per battery: fields with defaults are optional, unknown keys refused', () => {
    type Alternative = {
      required: string[];
      additionalProperties: boolean;
      properties: Record<string, { required?: string[]; default?: unknown; additionalProperties?: boolean; const?: string }>;
    };
    const alternatives = (campaignJsonSchema() as { oneOf: Alternative[] }).oneOf;
    const schema = alternatives.find((a) => a.properties['battery']?.const === 'far6')!;

    expect(alternatives.map((a) => a.properties['battery']?.const)).toEqual([...batteryNames(), undefined]);
    expect(schema.required).toEqual(['name', 'seed', 'budget_usd', 'battery', 'design', 'models', 'judge']);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.concurrency?.default).toBe(16);
    expect(schema.properties.design?.required).toEqual(['stories', 'concept_pairs', 'languages']);
    expect(schema.properties.design?.additionalProperties).toBe(false);
  });

  it('has one alternative for a battery of your own: battery a path (as the loader tells a path from a name) or { module } or { path }, any design, its roles let through', () => {
    type Own = { properties: { battery: { anyOf: { type: string; pattern?: string; required?: string[] }[] }; design: { type: string } }; additionalProperties?: unknown; required: string[] };
    const own = (campaignJsonSchema() as { oneOf: Own[] }).oneOf.at(-1)!;
    const [asPath, asModule, asFolder] = own.properties.battery.anyOf;
    expect([asModule!.required, asFolder!.required]).toEqual([['module'], ['path']]);
    expect(own.required).toEqual(expect.arrayContaining(['battery', 'design', 'models']));
    expect(own.properties.design.type).toBe('object');
    expect(own.additionalProperties).not.toBe(false);
    // The pattern picks exactly the strings batterySourceOf reads as a path; a built-in name matches only its own alternative.
    const pattern = new RegExp(asPath!.pattern!);
    for (const value of ['./likert/', '../studies/x.ts', '/abs/battery', 'studies/likert']) {
      expect(pattern.test(value), value).toBe(true);
      expect(batterySourceOf(value, '/lab'), value).toEqual({ path: path.resolve('/lab', value) });
    }
    for (const value of batteryNames()) {
      expect(pattern.test(value), value).toBe(false);
      expect(batterySourceOf(value, '/lab')).toBeUndefined();
    }
  });

  it.each([...validFixtures, ...examples])('campaign file %s is valid', async (file) => {
    const campaign = await loadCampaign(file);

    expect(campaign.models.length).toBeGreaterThan(0);
  });
});
