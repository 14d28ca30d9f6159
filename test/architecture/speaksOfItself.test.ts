/**
 * The project speaks of itself: code, comments, docs and benches say what the code does and why,
 * never which ticket produced it — a reader cannot open "issue 15" or issue "Performance"; the
 * history is the git log. Every file git tracks is read (the lock file aside).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/campaigns.js';

/** "issue 15", "issue #15", "ticket 3", "issue item 3", `issue "Performance"`, `issues "A" and "B"`. */
/** This file: its examples cite tickets on purpose. */
const SELF = 'test/architecture/speaksOfItself.test.ts';
const TICKET = /\bissue\s*#?\s*\d+\b|\bissue\s+item\b|\bissues?\s+"[A-Z]|\bticket\s*#?\s*\d/i;

function ticketCitations(text: string): number[] {
  return text.split('\n').flatMap((line, i) => (TICKET.test(line) ? [i + 1] : []));
}

describe('the project speaks of itself', () => {
  it('no tracked file cites an issue or a ticket', () => {
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: REPO_ROOT, encoding: 'utf8' })
      .split('\0')
      .filter((f) => f !== '' && f !== 'package-lock.json' && f !== SELF && !/\.(png|parquet|gz|ico)$/.test(f));
    expect(files.length).toBeGreaterThan(500);
    const cited = files.flatMap((f) => {
      let text: string;
      try {
        text = readFileSync(path.join(REPO_ROOT, f), 'utf8');
      } catch {
        return []; // listed by git but removed in the working tree
      }
      return ticketCitations(text).map((line) => `${f}:${line}`);
    });
    expect(cited, 'say what the code does and why; the history is the git log').toEqual([]);
  });

  it('the check catches each way of citing a ticket, and passes code that handles issues', () => {
    for (const line of ['see issue 15', '(issue #2)', 'ticket 7', '(issue item 3)', '(issue "Performance": both cores)', 'issues "A" and "B"']) expect(ticketCitations(line), line).toEqual([1]);
    for (const line of ['for (const issue of issues) out.push(issue);', 'rd.issue(i, path, message)', 'Issue categories to run', 'function kindOf(issue: ByoIssue)']) expect(ticketCitations(line), line).toEqual([]);
  });
});
