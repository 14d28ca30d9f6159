import { readFile } from 'node:fs/promises';
import { isMap, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import type { Document } from 'yaml';
import { CampaignFileError, formatIssues } from '../errors.js';
import type { FileIssue } from '../errors.js';
import { checkCampaign } from './campaign.js';
import type { Campaign, CampaignIssue, ParseCampaignOptions } from './campaign.js';

function fail(issues: FileIssue[], cause?: unknown): never {
  throw new CampaignFileError(formatIssues(issues), issues, cause === undefined ? undefined : { cause });
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const message =
      code === 'ENOENT'
        ? 'no such campaign file; check the path'
        : code === 'EISDIR'
          ? 'is a folder; expected a campaign YAML file'
          : `cannot be read (${code ?? String(err)})`;
    return fail([{ file, path: '', message }], err);
  }
}

/**
 * The line of the node at `segments`, or of its nearest ancestor that exists (a missing key is
 * reported at the mapping that lacks it). For an unknown key, the key's own line.
 */
function lineOf(doc: Document, lines: LineCounter, segments: readonly (string | number)[]): number | undefined {
  const lineAt = (n: unknown): number | undefined => {
    const range = (n as { range?: [number, number, number] } | null)?.range;
    return range ? lines.linePos(range[0]).line : undefined;
  };
  let node: unknown = doc.contents;
  let line = lineAt(node);
  for (const seg of segments) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === seg);
      if (!pair) break;
      line = lineAt(pair.key) ?? line;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      node = node.items[seg];
      if (node === undefined) break;
      line = lineAt(node) ?? line;
    } else break;
  }
  return line;
}

/**
 * Reads and parses a campaign file. Every problem, YAML syntax (with line and column) or schema
 * (with path and line), comes back as one CampaignFileError.
 * @example const campaign = await loadCampaign('examples/<battery>/demo.yaml');
 */
export async function loadCampaign(file: string, options: ParseCampaignOptions = {}): Promise<Campaign> {
  const text = await readText(file);
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true });
  if (doc.errors.length > 0) {
    fail(
      doc.errors.map((e) => {
        const pos = e.linePos?.[0];
        // yaml appends " at line L, column C:" and a source excerpt; the path carries the position.
        const message = (e.message.split('\n')[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, '');
        return { file, path: pos ? `line ${pos.line}, column ${pos.col}` : '', message: `invalid YAML: ${message}` };
      }),
      doc.errors[0],
    );
  }

  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 1000 });
  } catch (err) {
    fail([{ file, path: '', message: `invalid YAML: ${err instanceof Error ? err.message : String(err)}` }], err);
  }

  const result = checkCampaign(raw, file, options);
  if (result.ok) return result.campaign;
  // In file order, so the list reads top to bottom with the file open beside it.
  const located = result.issues
    .map((issue) => ({ issue, line: lineOf(doc, lines, issue.segments) }))
    .sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
  const issues: CampaignIssue[] = located.map(({ issue, line }) =>
    line === undefined ? issue : { ...issue, message: `${issue.message} (line ${line})` },
  );
  return fail(issues);
}
