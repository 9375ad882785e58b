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
  // One test file at a time (they share the machine's PostgreSQL, ports and CPU), in a worker that
  // is replaced once it holds more than this after a file: each file loads the app anew, and in one
  // long-lived process their leftovers outgrow V8's heap over the whole suite.
  workerIdleMemoryLimit: '1GB',
  reporters: ['default', '<rootDir>/test/support/memory-reporter.mjs', '<rootDir>/test/support/slowest-suites-reporter.mjs'],
  globalSetup: '<rootDir>/test/support/global-setup.mjs',
  globalTeardown: '<rootDir>/test/support/global-teardown.mjs',
};
