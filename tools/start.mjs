#!/usr/bin/env node
/**
 * `npm start`: serves the built server, building it first only when a build input changed since
 * the last build (or there is none), so a start after `npm ci` (which builds) takes seconds.
 * `npm run build` ends with `node tools/start.mjs --stamp`, which records that build.
 *
 *   node tools/start.mjs           build if needed, then run dist/src/main.js
 *   node tools/start.mjs --stamp   record that dist/ was just built from the current inputs
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const STAMP = join(root, 'dist', '.built');
/** What `npm run build` reads: the TypeScript of the server, the page, the migrations, and their settings. */
const INPUTS = ['src', 'web', 'migrations', 'bench', 'test/support', 'tools/build-web-assets.mjs', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'];

/** The newest modification time among the build inputs, in ms (0 when none exists). */
function newestInput() {
  let newest = 0;
  const visit = (path) => {
    let stats;
    try {
      stats = statSync(path);
    } catch {
      return;
    }
    newest = Math.max(newest, stats.mtimeMs);
    if (stats.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  for (const input of INPUTS) visit(join(root, input));
  return newest;
}

function builtAt() {
  return existsSync(STAMP) && existsSync(join(root, 'dist', 'src', 'main.js')) ? statSync(STAMP).mtimeMs : -1;
}

if (process.argv.includes('--stamp')) {
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  process.exit(0);
}

if (builtAt() < newestInput()) {
  process.stderr.write('skillhost: the sources changed since the last build (or there is none): building first (npm run build)\n');
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
await import(pathToFileURL(join(root, 'dist', 'src', 'main.js')).href);
