import path from 'node:path';

/**
 * A path as the CLI prints it: relative to the working directory, so that output pasted into a
 * mail or an issue names no home folder or user name ("." for the working directory itself).
 * @example shownPath('/home/ana/study/data/campaigns/demo/results') // 'data/campaigns/demo/results' from /home/ana/study
 */
export function shownPath(p: string): string {
  return path.relative(process.cwd(), path.resolve(p)) || '.';
}
