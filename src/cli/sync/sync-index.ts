import { skillDigest } from '../../domain/skills/store/index-skill-digest.js';

/**
 * The discovery index a server sends `skillhost sync`, checked before anything is fetched: every skill
 * whose entry could write outside its folder, send the key elsewhere or exceed the caps is refused,
 * with why, and the others go on.
 */

/** One file of a remote skill, its URL resolved against the server and checked to be on its origin. */
export interface RemoteFile {
  path: string;
  digest: string;
  size: number;
  url: URL;
}

export interface RemoteSkill {
  name: string;
  digest: string;
  files: RemoteFile[];
}

/** One version of a skill as the server's versions.json lists it (Skillhost's companion to the index). */
export interface RemoteVersion extends RemoteSkill {
  /** The store's content digest of this version (what `skillhost versions` shows), or null. */
  versionDigest: string | null;
  number: number | null;
}

/** A skill the index names but sync will not take, and why. */
export interface RefusedEntry {
  name: string;
  reason: string;
}

export interface CheckedIndex {
  skills: RemoteSkill[];
  refused: RefusedEntry[];
}

export interface SyncCaps {
  /** Largest file taken. */
  fileBytes: number;
  /** Largest skill taken (all its files), and most files in one: the MCP Skills extension's limits, as the server's. */
  skillBytes: number;
  skillFiles: number;
}

/** An index that cannot be read at all: nothing is changed. */
export class IndexRefused extends Error {}

export const LOCK_FILE = 'skills-lock.json';
/** A skill's folder name: one plain path segment (no dots, so never the lock file nor a hidden staging folder). */
const SKILL_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const DIGEST = /^sha256:[0-9a-f]{64}$/;
/** Printable ASCII, as the proposal allows; `\` refused below with the other unsafe forms. */
const PRINTABLE = /^[\x20-\x7e]+$/;

export function checkIndex(text: string, server: URL, caps: SyncCaps): CheckedIndex {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new IndexRefused(`the index is not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(parsed) || !Array.isArray(parsed.skills))
    throw new IndexRefused('the index is not a discovery index: no "skills" array');
  if (typeof parsed.version !== 'string' || !parsed.version.startsWith('0.2.'))
    throw new IndexRefused(`the index has version ${JSON.stringify(parsed.version)}; sync reads 0.2.x`);
  const result: CheckedIndex = { skills: [], refused: [] };
  const seen = new Set<string>();
  for (const [i, entry] of parsed.skills.entries()) {
    const name = isObject(entry) && typeof entry.name === 'string' ? entry.name : `#${i}`;
    const checked = checkSkill(entry, server, caps);
    if (typeof checked === 'string') result.refused.push({ name, reason: checked });
    else if (seen.has(checked.name)) result.refused.push({ name, reason: 'the index lists this name twice' });
    else {
      seen.add(checked.name);
      result.skills.push(checked);
    }
  }
  return result;
}

/**
 * The versions a server's versions.json lists, by skill name: each checked as an index entry is, and one that fails
 * left out (a pin that names it is then not found, and says so).
 */
export function checkVersions(text: string, server: URL, caps: SyncCaps): Map<string, RemoteVersion[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new IndexRefused(`versions.json is not valid JSON (${(error as Error).message})`);
  }
  if (!isObject(parsed) || !Array.isArray(parsed.skills)) throw new IndexRefused('versions.json has no "skills" array');
  const byName = new Map<string, RemoteVersion[]>();
  for (const skill of parsed.skills) {
    if (!isObject(skill) || typeof skill.name !== 'string' || !Array.isArray(skill.versions)) continue;
    const versions: RemoteVersion[] = [];
    for (const version of skill.versions) {
      if (!isObject(version)) continue;
      const checked = checkSkill({ ...version, name: skill.name }, server, caps);
      if (typeof checked === 'string') continue;
      const named = isObject(version.version) ? version.version : {};
      versions.push({
        ...checked,
        versionDigest: typeof named.digest === 'string' && DIGEST.test(named.digest) ? named.digest : null,
        number: typeof named.number === 'number' && Number.isSafeInteger(named.number) ? named.number : null,
      });
    }
    byName.set(skill.name, versions);
  }
  return byName;
}

/** The skill as sync may take it, or what is wrong with its entry. */
function checkSkill(entry: unknown, server: URL, caps: SyncCaps): RemoteSkill | string {
  if (!isObject(entry)) return 'its entry is not an object';
  const { name, digest, files } = entry;
  if (typeof name !== 'string' || !SKILL_NAME.test(name))
    return `its name ${JSON.stringify(name)} is not a plain folder name (letters, digits, - and _, at most 64)`;
  if (typeof digest !== 'string' || !DIGEST.test(digest))
    return `its digest ${JSON.stringify(digest)} is not sha256:<64 hex>`;
  if (!Array.isArray(files) || files.length === 0) return 'it lists no files';
  if (files.length > caps.skillFiles) return `it lists ${files.length} files; sync takes at most ${caps.skillFiles}`;
  const checked: RemoteFile[] = [];
  for (const file of files) {
    const one = checkFile(file, server, caps);
    if (typeof one === 'string') return one;
    checked.push(one);
  }
  const problem = layoutProblem(checked);
  if (problem !== undefined) return problem;
  const total = checked.reduce((sum, file) => sum + file.size, 0);
  if (total > caps.skillBytes) return `its files hold ${total} bytes; sync takes at most ${caps.skillBytes} per skill`;
  // The proposal's post-fetch check, made before any fetch: each file is then held to its own digest on download.
  const computed = skillDigest(checked);
  if (computed !== digest) return `its digest ${digest} is not the one its files' digests make (${computed})`;
  return { name, digest, files: checked };
}

function checkFile(file: unknown, server: URL, caps: SyncCaps): RemoteFile | string {
  if (!isObject(file)) return 'a file entry is not an object';
  const { path, digest, size, url } = file;
  if (typeof path !== 'string') return 'a file entry has no path';
  const bad = pathProblem(path);
  if (bad !== undefined) return `file ${JSON.stringify(path)}: ${bad}`;
  if (typeof digest !== 'string' || !DIGEST.test(digest)) return `file ${path}: its digest is not sha256:<64 hex>`;
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
    return `file ${path}: its size is not a byte count`;
  if (size > caps.fileBytes) return `file ${path} is ${size} bytes; sync takes files of at most ${caps.fileBytes}`;
  if (typeof url !== 'string') return `file ${path}: it has no url`;
  let resolved: URL;
  try {
    resolved = new URL(url, server);
  } catch {
    return `file ${path}: its url ${JSON.stringify(url)} is not a URL`;
  }
  // The key goes with every download: never to another origin than the server's.
  if (resolved.origin !== server.origin)
    return (
      `file ${path}: its url is on ${resolved.origin}, not on the server ` +
      `(${server.origin}); the key is sent nowhere else`
    );
  return { path, digest, size, url: resolved };
}

/**
 * Why a path could write outside its skill folder or onto something else, or undefined when it is a plain relative
 * path.
 */
export function pathProblem(path: string): string | undefined {
  if (path === '') return 'the path is empty';
  if (!PRINTABLE.test(path)) return 'the path has characters outside printable ASCII';
  if (path.includes('\\')) return 'the path has a backslash';
  if (path.startsWith('/')) return 'the path is absolute';
  const segments = path.split('/');
  if (segments.some((segment) => segment === '')) return 'the path has an empty segment';
  if (segments.some((segment) => segment === '..' || segment === '.')) return "the path has a '.' or '..' segment";
  return undefined;
}

/** Two entries for one path, or a file where another needs a folder. */
function layoutProblem(files: readonly RemoteFile[]): string | undefined {
  const paths = new Set<string>();
  for (const file of files) {
    if (paths.has(file.path)) return `file ${file.path} is listed twice`;
    paths.add(file.path);
  }
  for (const file of files) {
    const segments = file.path.split('/');
    for (let i = 1; i < segments.length; i++) {
      const parent = segments.slice(0, i).join('/');
      if (paths.has(parent)) return `${parent} is listed as a file and as a folder`;
    }
  }
  if (!paths.has('SKILL.md')) return 'it has no SKILL.md';
  return undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
