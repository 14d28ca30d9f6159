import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import FilesInFlight from './test/setup/filesInFlight.js';

/**
 * Test files that share one worker thread. Loading the library's module graph costs each file one
 * to two seconds of CPU in a fresh fork, and the suite is bound by CPU on the 2-core machines it
 * runs on; these files run in one thread that loads it once. Each is listed because it leaves
 * nothing behind for the next file and needs nothing a worker thread lacks: no vi.mock or stubbed
 * env/globals left in place, no process.env or cwd change, no server, thread, timer or child
 * process left running, no module state another file reads (a battery registered by a test, for
 * one). A file that does any of these stays in the isolated project, one fresh fork per file.
 */
const SHARED_THREAD = [
  'test/architecture/**/*.test.ts',
  'test/battery/**/*.test.ts',
  'test/core/**/*.test.ts',
  'test/design/**/*.test.ts',
  'test/helpers/asl/**/*.test.ts',
  'test/metrics/**/*.test.ts',
  // Not htmlBrowser, htmlReport (Chromium) nor byoThreads (a pool of threads).
  'test/batteries/far6/analysis/{agreement,analyzeCampaign,bootstrapPairs,byoImport,byoQuickRow,byoRoundTrip,byoSchema,consolePairCount,estimators,habits,identity,identitySimulated,judgeAudit,parseRows,profiles,readoutResiduals,report,sameReplies,sql,stats,studyReport}.test.ts',
  'test/batteries/far6/design/*.test.ts',
  'test/batteries/far6/read/*.test.ts',
  'test/batteries/far6/simulate/*.test.ts',
  'test/batteries/far6/{analysisChoices,auditConfig,recovery}.test.ts',
  'test/batteries/far6/auditSample.test.ts',
  'test/batteries/ptrue/{analysis,byo,demo,eldDetect,items,phases,prompts,queryRows,read,sharedWork,simulate,simulationJudgeTruth,simulationRecovery,sql,verifyWire}.test.ts',
  'test/batteries/xvalue/{analysis,byo,examples,expand,loadQaPairs,phases,prompts,quickQaPair,read,report,simulate,sql}.test.ts',
  'test/gpu/{instanceClock,planGpu}.test.ts',
  'test/providers/{anthropic,anthropicBatch,anthropicLogprobs,bedrock,bedrockBatch,bedrockCampaign,connectionErrors,openai,openaiBatch,pricing,rateLimits,registry,scoringGroup,vllmCandidates,vllmPromptLogprobs}.test.ts',
  'test/report/{colourScale,shell}.test.ts',
  'test/run/{accounting,admissionOffset,awsCost,batchLedger,budget,batchLookup,batchRemainder,callEnded,callSignal,dependentTotals,itemMaxCost,journalBacklog,partQueue,partition,partitionsPerThread,permanentFailures,planKeepsReadItems,planMaxAboveEstimate,pollInterval,rateLimitHeaders,rateLimiter,readingFingerprint,readingsUpgrade,refreshReadings,runFlags,shardWork,shards,storageStop,threadLedger,threadsFlag,upstreamRows,workerLease}.test.ts',
  'test/store/{athenaCsv,athenaQueryable,blobStore,duckDbClose,duckDbMemory,duckdbRows,duckdbSpill,dynamoCounters,dynamoPartMarks,jsParquet,keptSubqueries,layout,ledgerLayout,levelTypes,parquet,purge,s3BlobStore,stagedParts,storageFailures,transientAwsError,writeWhole}.test.ts',
  'test/view/batteryViews.test.ts',
  'test/cli/{badDataFiles,badInputSweep,deepNesting,help,main,plan,statusFailuresLine,workerQuotaNote}.test.ts',
  'test/config/{pipeline,stackEnv}.test.ts',
  'test/functions/{powertools,recordFailure,registration,secrets,spendMetrics}.test.ts',
  'test/infra/namedQueries.test.ts',
  'test/query/{rowReader,sqlIncludes}.test.ts',
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
    // suite runs on. Many files wait on child processes, threads and local servers, so two forks
    // and the shared thread keep both cores busy: 90–95 % through the suite, by /proc/stat and by
    // user + system time over wall. A third fork costs more in contention than it fills: a full
    // run took 716 s with three against 609 s with two, back to back.
    maxWorkers: 2,
    poolOptions: { threads: { singleThread: true, isolate: false } },
    projects: [
      {
        extends: true,
        test: {
          name: 'isolated',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...SHARED_THREAD],
        },
      },
      {
        extends: true,
        test: {
          name: 'shared',
          include: SHARED_THREAD,
          // Vitest runs a project with `singleFork` after every isolated fork has ended, on one
          // core while the other idles; a pool of its own (threads; isolation and the single
          // thread are that pool's options above) runs beside the forks from the start.
          pool: 'threads',
        },
      },
    ],
  },
});
