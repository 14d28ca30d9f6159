/**
 * The package's own folder (where package.json is), as a file URL ending in `/`: the same from
 * the TypeScript sources (lib/cli/) and from the compiled package (dist/lib/cli/), where the
 * number of folders up differs.
 */
import { existsSync, readFileSync } from 'node:fs';

let root: URL | undefined;

export function packageRoot(): URL {
  if (root) return root;
  for (let dir = new URL('./', import.meta.url); ; dir = new URL('../', dir)) {
    const pkg = new URL('package.json', dir);
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'sondage') return (root = dir);
    if (new URL('../', dir).href === dir.href) throw new Error(`no package.json of sondage above ${import.meta.url}`);
  }
}
