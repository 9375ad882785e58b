// Stops the shared embedded PostgreSQL that test/support/database.ts starts when no DATABASE_URL
// is set, then removes this run's temp folder. Plain JavaScript: Jest loads this file outside the
// TypeScript transform.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export default async function globalTeardown() {
  const folder = process.env.SKILLHOST_TEST_RUN_DIR;
  if (folder === undefined) return;
  await stopPostgres(join(folder, 'pg', 'data', 'postmaster.pid'));
  rmSync(folder, { recursive: true, force: true });
}

async function stopPostgres(pidFile) {
  if (!existsSync(pidFile)) return;
  const pid = Number.parseInt(readFileSync(pidFile, 'utf8').split('\n')[0], 10);
  if (!Number.isInteger(pid) || pid <= 0) return;
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  process.kill(pid, 'SIGINT');
  for (let waited = 0; waited < 15000 && alive(); waited += 100) await new Promise((r) => setTimeout(r, 100));
}
