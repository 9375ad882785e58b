#!/usr/bin/env node
/**
 * `npm start`: serves the built server, building it first only when a build input changed since
 * the last build (or there is none; tools/build-stamp.mjs tells), so a start after `npm ci` (which
 * builds) takes seconds. It does not rebuild under a Skillhost that serves from this folder.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isBuildCurrent, ROOT } from './build-stamp.mjs';

/**
 * A Skillhost already running from this folder's dist/ (Linux: from /proc), which a build would
 * pull its files out from under. Elsewhere none is found.
 */
function serverRunningHere() {
  const main = join(ROOT, 'dist', 'src', 'main.js');
  const mine = new Set([String(process.pid), String(process.ppid)]);
  let pids;
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name) && !mine.has(name));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      const runs = (arg) =>
        arg === main || join(cwd, arg) === main || join(cwd, arg) === join(ROOT, 'tools', 'start.mjs');
      if (args.slice(1).some(runs)) return pid;
    } catch {
      // Gone, or not ours to read.
    }
  }
  return undefined;
}

if (!isBuildCurrent()) {
  const running = serverRunningHere();
  if (running !== undefined) {
    process.stderr.write(
      `skillhost: the sources changed since the last build, but a Skillhost started from this folder is running ` +
        `(pid ${running}); building now would replace its files. Stop it first, or serve the last build as it is: ` +
        `node dist/src/main.js\n`,
    );
    process.exit(1);
  }
  process.stderr.write(
    'skillhost: the sources changed since the last build (or there is none): building first (npm run build)\n',
  );
  const build = spawnSync('npm', ['run', '--silent', 'build'], {
    cwd: ROOT,
    stdio: 'inherit',
    shell: process.platform === 'win32',
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
await import(pathToFileURL(join(ROOT, 'dist', 'src', 'main.js')).href);
