/** Jest in native ESM mode (run with NODE_OPTIONS=--experimental-vm-modules), compiled by SWC. */
export default {
  rootDir: '.',
  testEnvironment: 'node',
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/packages/*/src/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts', '<rootDir>/test/**/*.int-spec.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  // The workspace packages are tested from their sources, as the server's own files are.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1', '^@skillhost/(core|nest|ai-sdk|sandbox)$': '<rootDir>/packages/$1/src/index.ts' },
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  // The example app has its own suite (run by test/package) and its own install of the packed package.
  modulePathIgnorePatterns: ['<rootDir>/examples/'],
  testTimeout: 30000,
  // One test file per core at a time. Files do not share state: each has a database of its own
  // (test/support/database.ts), its own temp folders and ports from its worker's own range
  // (test/support/ports.ts); dist/ is built before any file runs (global-setup.mjs). More workers than cores
  // only make the files' timing-bound steps (servers, browsers, initdb) wait on each other for CPU.
  maxWorkers: '100%',
  // A worker is replaced once it holds more than this after a file: each file loads the app anew,
  // and in one long-lived process their leftovers outgrow V8's heap over the whole suite.
  workerIdleMemoryLimit: '1GB',
  // Slow files first on a fresh clone; builds a stale dist/ once, before the workers (global-setup.mjs).
  testSequencer: '<rootDir>/test/support/test-sequencer.mjs',
  reporters: ['default', '<rootDir>/test/support/memory-reporter.mjs', '<rootDir>/test/support/slowest-suites-reporter.mjs'],
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
};
