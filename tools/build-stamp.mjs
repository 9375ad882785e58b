#!/usr/bin/env node
/**
 * Whether dist/ was built from the build inputs as they are now. `npm run build` records the
 * newest input's time when it begins (`begin`), and makes that record the build's stamp once it
 * has succeeded (`finish`), so an edit made while it ran still counts as newer than the build.
 * `npm start` (tools/start.mjs) and the tests that start built servers build only when it is stale.
 *
 * `current` exits 0 when dist/ is current: `npm ci`'s prepare skips the build then, and so does
 * the install that `npx skillhost` makes of a checkout on its first run, which would otherwise
 * empty dist/ under anything running from it (a server, other test files).
 *
 *   node tools/build-stamp.mjs begin | finish | current
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STAMP = join(ROOT, 'dist', '.built');
const BEGUN = join(ROOT, 'dist', '.building');
/**
 * What `npm run build` reads: the TypeScript of the packages, the server, the page, the migrations, and their settings.
 */
const INPUTS = [
  ...['core', 'sandbox', 'nest', 'ai-sdk'].flatMap((name) => [`packages/${name}/src`, `packages/${name}/package.json`]),
  'src',
  'web',
  'migrations',
  'bench',
  'test/support',
  'tools/build-web-assets.mjs',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
];

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
  for (const input of INPUTS) visit(join(ROOT, input));
  return newest;
}

/** True when dist/ holds a finished build of inputs no newer than the ones it was built from. */
export function isBuildCurrent() {
  if (!existsSync(join(ROOT, 'dist', 'src', 'main.js'))) return false;
  let builtFrom;
  try {
    builtFrom = Number(readFileSync(STAMP, 'utf8'));
  } catch {
    return false;
  }
  return Number.isFinite(builtFrom) && newestInput() <= builtFrom;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const step = process.argv[2];
  if (step === 'begin') {
    mkdirSync(join(ROOT, 'dist'), { recursive: true });
    writeFileSync(BEGUN, `${newestInput()}\n`);
  } else if (step === 'finish') {
    renameSync(BEGUN, STAMP);
  } else if (step === 'current') {
    process.exit(isBuildCurrent() ? 0 : 1);
  } else {
    process.stderr.write('usage: node tools/build-stamp.mjs begin | finish | current\n');
    process.exit(2);
  }
}
