#!/usr/bin/env node
/**
 * `npm run build` (and `npm pack`, through "prepack"): compiles lib/, functions/ and infra/ to
 * JavaScript and declarations under dist/ (tsconfig.build.json), and copies beside them the files
 * the code reads at run time (SQL, JSON price tables, thread entries, the viewer's page script), so that the installed
 * package runs without tsx and without the TypeScript sources. A clone needs no build: bin/sondage.mjs
 * runs the sources when they are there.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const dist = path.join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });

// Everything under these folders that is not TypeScript, and not a test or a note for developers.
const ASSETS = /\.(sql|json|mjs|js)$/;
let copied = 0;
for (const top of ['lib', 'functions', 'infra']) {
  for (const rel of readdirSync(path.join(root, top), { recursive: true })) {
    if (!ASSETS.test(rel)) continue;
    cpSync(path.join(root, top, rel), path.join(dist, top, rel));
    copied++;
  }
}
console.log(`sondage build: dist/ compiled, ${copied} run-time files copied beside it`);
