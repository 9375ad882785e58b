// Makes this test run's own temp folder (see test/support/files/run-folder.ts); the teardown removes it.
// Plain JavaScript: Jest loads this file outside the TypeScript transform.
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function globalSetup() {
  const folder = mkdtempSync(join(tmpdir(), 'skillhost-test-run-'));
  // As root the embedded PostgreSQL runs as `postgres`, which must be able to pass through it.
  chmodSync(folder, 0o755);
  process.env.SKILLHOST_TEST_RUN_DIR = folder;
}
