#!/usr/bin/env node
/**
 * Adds lock entries for platform-specific optional dependencies (e.g. @swc/core-darwin-arm64) that
 * npm left out because the registry this lock was made with does not serve them. Without them,
 * `npm ci` refuses the lock ("Missing: … from lock file"). Each entry records the version and the
 * os/cpu its name declares, so npm skips it on other platforms without fetching anything.
 *
 *   node tools/complete-lockfile.mjs        (after any `npm install` that rewrote package-lock.json)
 */
import { readFileSync, writeFileSync } from 'node:fs';

const OS = ['darwin', 'linux', 'win32', 'android', 'freebsd', 'openharmony', 'sunos', 'aix', 'netbsd', 'openbsd'];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'loong64', 'riscv64', 'mips64el'];

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const packages = lock.packages;
let added = 0;
for (const [location, entry] of Object.entries(packages)) {
  for (const [name, spec] of Object.entries(entry.optionalDependencies ?? {})) {
    const parentFolder = location === '' ? '' : `${location}/`;
    if (packages[`${parentFolder}node_modules/${name}`] || packages[`node_modules/${name}`]) continue;
    const parts = name.split('/').pop().split('-');
    const os = OS.find((o) => parts.includes(o));
    const cpu = CPU.find((c) => parts.includes(c));
    if (os === undefined || cpu === undefined || !/^\d+\.\d+\.\d+/.test(spec)) continue;
    packages[`node_modules/${name}`] = {
      version: spec.replace(/^[\^~=]/, ''),
      cpu: [cpu],
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      os: [os],
    };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} platform-specific optional entr${added === 1 ? 'y' : 'ies'}`);
