import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * What installing some packages brings along: their dependencies, followed the way Node resolves
 * them (the nearest `node_modules/<name>` from each package's folder up), as an installed tree has
 * them. Used by the packed-packages test (no forbidden package in the closure) and the package-size
 * benchmark (the bytes an app gets beyond the peers it already has).
 */

/** The frameworks an app that uses Skillhost's packages already has: not counted as added by them. */
export const APP_PEERS = (name: string): boolean =>
  name.startsWith('@nestjs/') || ['ai', 'zod', 'rxjs', 'reflect-metadata'].includes(name);

export interface InstalledPackage {
  name: string;
  version: string;
  /** Its folder, symlinks resolved. */
  dir: string;
  /** The bytes of its files, not counting a nested `node_modules` (those are packages of their own). */
  bytes: number;
}

export interface Closure {
  /** By folder: one entry per installed copy. */
  packages: Map<string, InstalledPackage>;
  /** `needed-by → name` for a required dependency that does not resolve. */
  missing: string[];
}

interface Manifest {
  name: string;
  version: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

function manifestOf(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
}

/** The folder `name` resolves to from `from`, as Node looks it up. */
export function resolvePackage(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    if (dirname(dir) === dir) return undefined;
  }
}

/** The bytes of the files under `dir` (apparent sizes), without nested `node_modules`. */
export function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' && entry.isDirectory()) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += folderBytes(path);
    else total += lstatSync(path).size;
  }
  return total;
}

/**
 * The packages that `names`, resolved from `from`, bring: themselves, their dependencies, their
 * optional dependencies where installed, and the peers they require (not the optional ones); never
 * a package `skip` names (nor what only it brings).
 */
export function dependencyClosure(
  names: readonly string[],
  from: string,
  skip: (name: string) => boolean = () => false,
): Closure {
  const packages = new Map<string, InstalledPackage>();
  const missing: string[] = [];
  const visit = (name: string, parent: string, neededBy: string, optional: boolean) => {
    if (skip(name)) return;
    const dir = resolvePackage(name, parent);
    if (dir === undefined) {
      if (!optional) missing.push(`${neededBy} → ${name}`);
      return;
    }
    if (packages.has(dir)) return;
    const manifest = manifestOf(dir);
    packages.set(dir, { name: manifest.name, version: manifest.version, dir, bytes: folderBytes(dir) });
    for (const dep of Object.keys(manifest.dependencies ?? {})) visit(dep, dir, manifest.name, false);
    for (const dep of Object.keys(manifest.optionalDependencies ?? {})) visit(dep, dir, manifest.name, true);
    // An optional peer is not installed for it (npm leaves it to the app), so it is not part of what it brings.
    for (const dep of Object.keys(manifest.peerDependencies ?? {}))
      if (manifest.peerDependenciesMeta?.[dep]?.optional !== true) visit(dep, dir, manifest.name, false);
  };
  for (const name of names) visit(name, from, '(app)', false);
  return { packages, missing };
}

/** The total bytes of a closure's packages. */
export function closureBytes(closure: Closure): number {
  return [...closure.packages.values()].reduce((sum, p) => sum + p.bytes, 0);
}
