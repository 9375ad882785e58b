import base from '../../jest.config.js';

/**
 * The real-agent suite (`npm run test:agents`): the pinned agent CLIs, installed from the npm
 * registry into `.agents/`, run headless against a fresh Skillhost. Not part of `npm test`.
 */
export default {
  ...base,
  rootDir: '../..',
  testMatch: ['<rootDir>/test/agents/**/*.agents-spec.ts'],
  testTimeout: 300_000,
  reporters: [...base.reporters, '<rootDir>/test/agents/results-reporter.mjs'],
};
