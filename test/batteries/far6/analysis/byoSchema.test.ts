import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BYO_COLUMNS, repliesJsonSchema, repliesJsonSchemaText } from '../../../../lib/batteries/far6/byo/index.js';
import { FAR6_PROMPT_COLUMNS } from '../../../../lib/batteries/far6/promptColumns.js';
import { REPO_ROOT } from '../../../helpers/campaigns.js';

describe('schema/replies.schema.json', () => {
  it('matches the schema the importer checks (regenerate: see the comment in this test)', async () => {
    // npx tsx -e "import('./lib/batteries/far6/byo/schema.ts').then((m) => process.stdout.write(m.repliesJsonSchemaText()))" > schema/replies.schema.json
    const committed = await readFile(path.join(REPO_ROOT, 'schema', 'replies.schema.json'), 'utf8');
    expect(committed).toBe(repliesJsonSchemaText());
  });

  it('requires the FAR-6 design factors the estimators need, the model, the language and the text; story_group and construction have defaults', () => {
    const schema = repliesJsonSchema() as { required: string[] };
    const factors = ['story', 'story_group', 'concept_pair', 'form', 'constraint', 'named', 'option_order', 'repeat', 'construction'];
    for (const f of factors) expect(FAR6_PROMPT_COLUMNS.factors.map((c) => c.name)).toContain(f);
    expect(new Set(schema.required)).toEqual(new Set(['model', 'language', ...factors.filter((f) => f !== 'story_group' && f !== 'construction'), 'text']));
    expect(BYO_COLUMNS).toContain('readings');
    expect(BYO_COLUMNS).toContain('reading_map');
  });
});
