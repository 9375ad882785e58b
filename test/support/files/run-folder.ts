import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * This test run's own temp folder (made by test/support/global-setup.mjs, removed by its
 * teardown): the shared embedded PostgreSQL and the unpacked corpus live there, so two runs on one
 * machine never share a path. Outside Jest (a benchmark) the process makes its own and removes it
 * when it exits.
 */
export function runFolder(...parts: string[]): string {
  if (process.env.SKILLHOST_TEST_RUN_DIR === undefined) {
    const folder = mkdtempSync(join(tmpdir(), 'skillhost-run-'));
    // As root an embedded PostgreSQL here runs as `postgres`, which must be able to pass through it.
    chmodSync(folder, 0o755);
    process.env.SKILLHOST_TEST_RUN_DIR = folder;
    process.once('exit', () => rmSync(folder, { recursive: true, force: true }));
  }
  return join(process.env.SKILLHOST_TEST_RUN_DIR, ...parts);
}
