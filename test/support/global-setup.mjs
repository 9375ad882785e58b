// Makes this test run's own temp folder (see test/support/files/run-folder.ts), and builds dist/ when
// the run's files use it and it is stale; the teardown removes the folder. Plain JavaScript: Jest
// loads this file outside the TypeScript transform.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isBuildCurrent } from '../../tools/build-stamp.mjs';

export default function globalSetup() {
  const folder = mkdtempSync(join(tmpdir(), 'skillhost-test-run-'));
  // As root the embedded PostgreSQL runs as `postgres`, which must be able to pass through it.
  chmodSync(folder, 0o755);
  process.env.SKILLHOST_TEST_RUN_DIR = folder;
  buildIfStale();
}

/**
 * Here, before any worker starts: `npm run build` empties dist/ first, so a build while other
 * files run would take the built server and the web page from under them. CI has built already;
 * after an edit this builds once. Runs of unit specs only (test-sequencer.mjs says) skip it. A
 * failed build (a type error) fails the files that start the built server, not the whole run.
 */
function buildIfStale() {
  if (process.env.SKILLHOST_TEST_NEEDS_BUILD !== '1' || isBuildCurrent()) return;
  process.stderr.write('\nBuilding dist/ first (`npm run build`): the sources changed since the last build.\n');
  try {
    execFileSync('npm', ['run', '--silent', 'build'], { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    process.stderr.write(`The build failed; the tests that use dist/ will fail:\n${error.stdout}${error.stderr}\n`);
  }
}
