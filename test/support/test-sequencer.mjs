// Orders test files for parallel workers and says whether this run needs dist/. Plain JavaScript:
// Jest loads its sequencer outside the TypeScript transform.
import Sequencer from '@jest/test-sequencer';

/** Under test/: integration and end-to-end files, which start apps, servers, browsers and PostgreSQL. */
const isServerTest = (test) => test.path.startsWith(`${test.context.config.rootDir}/test/`);

export default class SkillhostSequencer extends Sequencer {
  /**
   * Jest's order: failed last time first, then slowest last time first. With no timings (a fresh
   * clone) it guesses by file size, and a short file can be a slow one (the docs' examples): then
   * the files under test/ go first and the unit specs fill the workers' last minutes, so no worker
   * starts a minute-long file while the other has nothing left to do.
   */
  sort(tests) {
    const sorted = super.sort(tests);
    // Read by global-setup.mjs, which runs after this: it builds a stale dist/ only for such files.
    process.env.SKILLHOST_TEST_NEEDS_BUILD = sorted.some(isServerTest) ? '1' : '';
    if (sorted.some((test) => test.duration != null)) return sorted;
    return [...sorted.filter(isServerTest), ...sorted.filter((test) => !isServerTest(test))];
  }
}
