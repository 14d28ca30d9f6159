/**
 * What every Lambda bundle is made of, besides its entry (functions/<name>/handler.ts): shared by
 * the Handler construct, which hands it to NodejsFunction, and by bench/lambda-bundles.ts and
 * test/infra, which bundle with esbuild the same way to measure and check the result. No CDK
 * import here, so that a script can read it without loading aws-cdk-lib.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { FunctionSizing, LambdaArchitecture } from '../../lib/config/sizing.js';

/** esbuild's target for the runtime the functions run on (Node.js 24). */
export const BUNDLE_TARGET = 'node24';

/** Some CommonJS dependencies call require(); the ESM bundle gets one. */
export const BUNDLE_BANNER = "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);";

/**
 * How every function's code is bundled, besides entry, format, target, externals and banner
 * (bench/lambda-bundles.ts bundles with the same options to measure them). No source map: inline
 * maps were ~10 MB of every asset and an external `.map` would still be uploaded with it. Minified
 * with `keepNames`: esbuild re-sets each function's and class's `name`, which V8 prints in stack
 * frames, so a trace in CloudWatch reads `at runShards (file:///var/task/index.mjs:1:123456)`:
 * the original function names, at line 1 and a column of the bundle instead of a .ts line. Names
 * matter beyond traces too: a provider SDK error's class name is stored as the reply's error_class.
 */
export const BUNDLE_SHAPE = { sourceMap: false, minify: true, keepNames: true } as const;

/**
 * What esbuild leaves out of every bundle: the runtime's AWS SDK v3, and DuckDB, whose native
 * binding cannot be bundled. A DuckDB function gets DuckDB copied beside its bundle
 * (duckdbBundlingCommands); in the others (the worker) DuckDB is reached only by a dynamic
 * `import()` that never runs there (lib/store/duckdbApi.ts), which must stay external too.
 */
export function externalModules(_sizing?: Pick<FunctionSizing, 'duckdb'>): readonly string[] {
  return ['@aws-sdk/*', '@duckdb/*'];
}

/**
 * A battery of the user's own that the stack carries (`-c sondage:batteries=…`, infra/app.ts):
 * its module file, compiled into every function's bundle, and its analysis SQL files, copied
 * beside the bundles that query.
 */
export interface BundledBattery {
  readonly name: string;
  /** The battery's module file (TypeScript or JavaScript), absolute. */
  readonly file: string;
  /** Its SqlLibrary's `.sql` files (SqlLibrary.sourceFiles), absolute. */
  readonly sqlFiles: readonly string[];
}

/**
 * The functions (folders under functions/) that load the uploaded campaign and so its battery
 * (lib/run/campaignInput.ts): only they carry the batteries of one's own; record-failure stays small.
 */
export const CAMPAIGN_FUNCTIONS: readonly string[] = ['plan', 'worker', 'report'];

/**
 * The module esbuild injects into a function's bundle when the stack carries batteries of the
 * user's own (`--inject`: evaluated before the handler's own modules): it registers each one with
 * the checks a battery loaded from a file passes (adoptBundledBattery), so the batteries are known
 * before the first event, as the built-in ones are. `label` names each battery's file in its
 * errors, relative to where cdk ran rather than as the deploying machine's absolute path.
 */
export function batteryInjectSource(externalModule: string, batteries: readonly (BundledBattery & { readonly label: string })[]): string {
  const lines = [
    '// Written by the sondage CDK app (infra/constructs/Handler.ts): the batteries of its own this function carries.',
    `import { adoptBundledBattery } from ${JSON.stringify(toImportPath(externalModule))};`,
    ...batteries.map((b, i) => `import * as battery${i} from ${JSON.stringify(toImportPath(b.file))};`),
    ...batteries.map((b, i) => `adoptBundledBattery(battery${i}, ${JSON.stringify(b.label)});`),
  ];
  return `${lines.join('\n')}\n`;
}

function toImportPath(file: string): string {
  return file.split(path.sep).join('/');
}

/**
 * esbuild aliases that send a battery's `import … from 'sondage/battery'` (or `'sondage'`) to the
 * public entry of the copy being bundled, as the CLI's module hook does at run time
 * (lib/batteries/selfReference.ts): one copy of the core in the bundle, whatever the battery's
 * folder has in node_modules.
 */
export function publicEntryAliases(publicEntry: string): string[] {
  return ['sondage/battery', 'sondage'].map((specifier) => `${specifier}=${toImportPath(publicEntry)}`);
}

/** Shell commands that copy the batteries' SQL files into `outputDir/sql`, where their SqlLibrary reads them in a bundle. */
export function batterySqlCommands(outputDir: string, batteries: readonly BundledBattery[]): string[] {
  const files = [...new Set(batteries.flatMap((b) => b.sqlFiles))];
  if (files.length === 0) return [];
  const sqlOut = shellQuote(path.join(outputDir, 'sql'));
  return [`mkdir -p ${sqlOut}`, `cp ${files.map(shellQuote).join(' ')} ${sqlOut}/`];
}

/**
 * The folder of an installed package, looked up from `root` upwards as Node resolves it: in a
 * clone, the repository's node_modules; in an installed sondage, the project's node_modules that
 * sondage itself sits in. Undefined when none holds it.
 */
export function installedPackageDir(root: string, pkg: string): string | undefined {
  for (let dir = path.resolve(root); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', pkg);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}

/** The packages DuckDB needs at run time, by Lambda architecture (the native one must match it). */
export function duckdbPackages(architecture: LambdaArchitecture): readonly string[] {
  const native = architecture === 'arm64' ? '@duckdb/node-bindings-linux-arm64' : '@duckdb/node-bindings-linux-x64';
  return ['@duckdb/node-api', '@duckdb/node-bindings', native, 'detect-libc'];
}

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * Shell commands that put DuckDB beside a bundle in `outputDir`: its packages, copied from the
 * local node_modules into `outputDir/node_modules` (where the bundle's ESM `import` resolves them:
 * ESM ignores NODE_PATH, so a layer under /opt would not be found), and the analysis SQL files into
 * `outputDir/sql`: every SQL library (lib/query/sql.ts) reads its files next to the module that
 * declares it, which in a bundle is the bundle itself; the core's and every battery's queries
 * share that one folder (their names are unique, lib/batteries checks it).
 */
export function duckdbBundlingCommands(repoRoot: string, outputDir: string, architecture: LambdaArchitecture): string[] {
  const modules = path.join(outputDir, 'node_modules');
  const commands = duckdbPackages(architecture).map((pkg) => {
    const target = path.join(modules, pkg);
    const from = installedPackageDir(repoRoot, pkg) ?? path.join(repoRoot, 'node_modules', pkg);
    return `mkdir -p ${shellQuote(path.dirname(target))} && cp -R ${shellQuote(from)} ${shellQuote(target)}`;
  });
  const sqlOut = shellQuote(path.join(outputDir, 'sql'));
  commands.push(`mkdir -p ${sqlOut}`, `cp ${shellQuote(path.join(repoRoot, 'lib'))}/query/sql/*.sql ${shellQuote(path.join(repoRoot, 'lib'))}/batteries/*/sql/*.sql ${sqlOut}/`);
  return commands;
}

