import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import FilesInFlight from './test/setup/filesInFlight.js';

/**
 * Test files that share one process. Loading the library's module graph costs each file about two
 * seconds of CPU in a fresh fork; these files run in one fork that loads it once. Each is listed
 * because it leaves nothing behind for the next file: no vi.mock or stubbed env/globals left in
 * place, no process.env or cwd change, no server, thread, timer or child process left running, no
 * module state another file reads (a battery registered by a test, for one). A file that does any
 * of these stays in the isolated project, one fresh fork per file as before.
 */
const SHARED_PROCESS = [
  'test/architecture/**/*.test.ts',
  'test/battery/**/*.test.ts',
  'test/core/**/*.test.ts',
  'test/design/**/*.test.ts',
  'test/helpers/asl/**/*.test.ts',
  'test/metrics/**/*.test.ts',
  // Not htmlBrowser, htmlReport (Chromium) nor byoThreads (a pool of threads).
  'test/batteries/far6/analysis/{agreement,analyzeCampaign,byoImport,byoQuickRow,byoRoundTrip,byoSchema,consolePairCount,estimators,habits,identity,identitySimulated,judgeAudit,parseRows,profiles,readoutResiduals,report,sameReplies,sql,stats,studyReport}.test.ts',
  'test/batteries/far6/design/*.test.ts',
  'test/batteries/far6/read/*.test.ts',
  'test/batteries/far6/simulate/*.test.ts',
  'test/batteries/far6/auditConfig.test.ts',
  'test/batteries/far6/auditSample.test.ts',
  'test/batteries/ptrue/{analysis,byo,items,phases,prompts,read,simulate,simulationJudgeTruth,sql}.test.ts',
  'test/batteries/xvalue/{analysis,byo,examples,expand,loadQaPairs,phases,prompts,read,report,sql}.test.ts',
  'test/gpu/{instanceClock,planGpu}.test.ts',
  'test/providers/{pricing,rateLimits,registry}.test.ts',
  'test/report/{colourScale,shell}.test.ts',
  'test/run/{admissionOffset,batchLookup,batchRemainder,callEnded,callSignal,itemMaxCost,journalBacklog,partitionsPerThread,pollInterval,readingFingerprint,shards,threadsFlag,upstreamRows}.test.ts',
  'test/store/{athenaCsv,blobStore,duckDbMemory,duckdbSpill,dynamoPartMarks,jsParquet,layout,ledgerLayout,parquet,s3BlobStore,stagedParts,transientAwsError}.test.ts',
  'test/view/batteryViews.test.ts',
];

export default defineConfig({
  resolve: {
    // A battery from the user's folder imports `sondage/battery`. The CLI routes that to its own
    // copy with a module hook (lib/batteries/selfReference.ts); modules the tests load go through
    // Vite's resolver instead, which would find the package's compiled dist/ (absent in a fresh
    // clone, another copy of the core when present): the same routing, said to Vite.
    alias: [{ find: /^sondage(\/battery)?$/, replacement: fileURLToPath(new URL('./lib/api/battery.ts', import.meta.url)) }],
  },
  test: {
    // Every scratch folder under one temporary folder, removed at the end (test/setup/scratchTmp.ts).
    globalSetup: ['test/setup/scratchTmp.ts'],
    // A fork that dies mid-file ends the whole run with no summary: this names the files it was running.
    reporters: ['default', new FilesInFlight()],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one fork per core but one: a single fork on the 2-core machines this
    // suite runs on. Most files spend their time waiting on child processes, threads and local
    // servers, so two forks keep both cores busy.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'isolated',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...SHARED_PROCESS],
        },
      },
      {
        extends: true,
        test: {
          name: 'shared',
          include: SHARED_PROCESS,
          // Vitest takes fork isolation from the root config (it is one pool for all projects),
          // so this project asks for one fork of its own, kept for all its files, that does not
          // reload modules between them.
          poolOptions: { forks: { singleFork: true, isolate: false } },
        },
      },
    ],
  },
});
