import { spawn } from 'node:child_process';
import { type Dirent, existsSync, lstatSync, readdirSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { isAbsolute, join, posix } from 'node:path';
import { AppError, ErrorCode } from '@skillhost/core';
import { inheritedEnvironment } from '../../../config/inherited-environment.js';
import { type CheckedDestination, checkDestination, type DestinationPolicy } from './import-destination.js';

/**
 * A shallow checkout of one commit of a git repository, made with the `git` binary so that nothing
 * in the repository runs: hooks go to /dev/null (a repository's own hooks are never fetched, and
 * this turns off any the user's configuration names), the new repository gets no template,
 * submodules are fetched only when asked (each URL checked as the source's), `ext::` transports are
 * off, and git never prompts for a password. Git runs in its own process group, stopped whole when
 * it takes too long or the clone grows past its cap.
 */

/** Git's own options for every command: what a hostile repository or configuration could make run. */
const SAFE_CONFIG = [
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.fsmonitor=false',
  '-c',
  'protocol.ext.allow=never',
  '-c',
  'submodule.recurse=false',
  '-c',
  'advice.detachedHead=false',
  // A fetch of few objects is otherwise unpacked in memory, each written once whole: kept as a pack, it is written
  // to disk as it arrives, where the clone's cap sees it grow.
  '-c',
  'fetch.unpackLimit=1',
];
/** Git never prompts, and fetches no large-file content (that would bypass the clone's cap and checks). */
const GIT_ENV = {
  GIT_TERMINAL_PROMPT: '0',
  GIT_ASKPASS: 'true',
  SSH_ASKPASS: 'true',
  GIT_LFS_SKIP_SMUDGE: '1',
};
/** How deep "every skill under a path" looks for folders with SKILL.md. */
const MAX_SEARCH_DEPTH = 6;
/** How deep submodules of submodules are followed. */
const MAX_SUBMODULE_DEPTH = 4;
/** How often a running git's clone folder is measured against its cap. */
const SIZE_POLL_MS = 100;

export interface GitCheckout {
  commit: string;
}

export interface CheckoutOptions {
  timeoutMs: number;
  /** The most the clone folder may take on disk (`[app.skills.import] max_clone_bytes`). */
  maxBytes: number;
  /**
   * Whether git may read `file://` URLs: the source's own, and its submodules' (the source is git+file and the
   * caller may read this server's disk). Otherwise git speaks http(s) only, even when a server redirects.
   */
  allowFile: boolean;
  /** A member's import: every host git connects to is checked and pinned. Undefined: not checked. */
  destinations: DestinationPolicy | undefined;
  /** Whether the commit's submodules are checked out too (each at depth 1, recursively). */
  submodules: boolean;
}

/** Fetches `ref` (the remote's HEAD without one) at depth 1 into the empty folder `into` and checks it out. */
export async function checkoutGit(
  url: string,
  ref: string | undefined,
  into: string,
  options: CheckoutOptions,
): Promise<GitCheckout> {
  const deadline = Date.now() + options.timeoutMs;
  const run: Run = (args, noMatchIsEmpty = false) => git(args, { url, deadline, root: into, options, noMatchIsEmpty });
  const reach = await reachOf(url, options);
  await run(['init', '--quiet', '--template=', into]);
  // Relative submodule URLs (`../other.git`) resolve against the source, not against this folder.
  await run(['-C', into, 'remote', 'add', 'origin', url]);
  await run([
    ...reach,
    '-C',
    into,
    'fetch',
    '--quiet',
    '--depth',
    '1',
    '--no-tags',
    '--no-recurse-submodules',
    '--',
    url,
    ref ?? 'HEAD',
  ]);
  await run(['-C', into, 'checkout', '--quiet', '--detach', 'FETCH_HEAD']);
  const commit = (await run(['-C', into, 'rev-parse', 'HEAD'])).trim();
  if (options.submodules) await checkoutSubmodules(into, '', run, options, 1);
  return { commit };
}

type Run = (args: string[], noMatchIsEmpty?: boolean) => Promise<string>;

/**
 * Git's options for reaching `url`: for a member's import, its host pinned to the checked address
 * (`http.curloptResolve`, so git cannot resolve the name again to another) and no redirects (which would lead to an
 * unchecked host). Nothing for a file:// URL or an unchecked import.
 */
async function reachOf(url: string, options: CheckoutOptions): Promise<string[]> {
  const parsed = new URL(url);
  if (parsed.protocol === 'file:') {
    if (!options.allowFile) throw forbiddenFile(url);
    return [];
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw unreachable(url, `git imports speak https://, http:// or file://, not ${parsed.protocol}//`);
  if (options.destinations === undefined) return [];
  const checked = await checkDestination(parsed, options.destinations);
  return [...(checked === undefined ? [] : pinnedTo(checked)), '-c', 'http.followRedirects=false'];
}

/** Git's option that makes curl connect to the checked address for the host and port, whatever DNS says then. */
export function pinnedTo(checked: CheckedDestination): string[] {
  const address = checked.addresses[0];
  // curl's resolve list takes IPv6 in brackets.
  return [
    '-c',
    `http.curloptResolve=${checked.host}:${checked.port}:${address.includes(':') ? `[${address}]` : address}`,
  ];
}

/**
 * The submodules of the checkout at `path` (relative to `root`): each registered (`git submodule init` resolves
 * their URLs, relative ones against the source), each URL checked as the source's was, then fetched at depth 1 and
 * checked out; then theirs, to MAX_SUBMODULE_DEPTH. One at a time, so that each is pinned to its own address.
 */
async function checkoutSubmodules(
  root: string,
  path: string,
  run: Run,
  options: CheckoutOptions,
  depth: number,
): Promise<void> {
  const folder = path === '' ? root : join(root, path);
  if (!existsSync(join(folder, '.gitmodules'))) return;
  await run(['-C', folder, 'submodule', 'init', '--quiet']);
  const urls = configValues(await runListing(run, ['-C', folder, 'config', '--local']), 'url');
  const paths = configValues(await runListing(run, ['-C', folder, 'config', '--file', '.gitmodules']), 'path');
  for (const [name, url] of urls) {
    const subPath = paths.get(name);
    if (subPath === undefined) continue;
    const where = `submodule '${name}'`;
    const reach = await reachOf(checkedSubmoduleUrl(url, where), options);
    await run([...reach, '-C', folder, 'submodule', 'update', '--quiet', '--checkout', '--depth', '1', '--', subPath]);
    if (depth < MAX_SUBMODULE_DEPTH)
      await checkoutSubmodules(root, [path, subPath].filter((part) => part !== '').join('/'), run, options, depth + 1);
  }
}

/** `git config -z --get-regexp` of `submodule.NAME.url` and `.path` values; none is an empty listing. */
function runListing(run: Run, args: string[]): Promise<string> {
  return run([...args, '-z', '--get-regexp', '^submodule\\..*\\.(url|path)$'], true);
}

function configValues(listing: string, key: 'url' | 'path'): Map<string, string> {
  const values = new Map<string, string>();
  for (const entry of listing.split('\0')) {
    const newline = entry.indexOf('\n');
    if (newline === -1) continue;
    const name = entry.slice(0, newline);
    const suffix = `.${key}`;
    if (name.startsWith('submodule.') && name.endsWith(suffix))
      values.set(name.slice('submodule.'.length, -suffix.length), entry.slice(newline + 1));
  }
  return values;
}

/** A submodule's URL, when it is one git may fetch here: http(s) or file, without credentials or options. */
function checkedSubmoduleUrl(url: string, where: string): string {
  let parsed: URL | undefined;
  try {
    parsed = isAbsolute(url) ? new URL(`file://${url}`) : new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || !['https:', 'http:', 'file:'].includes(parsed.protocol) || url.startsWith('-'))
    throw unreachable(url, `${where} is not at an https://, http:// or file:// URL`);
  if (parsed.protocol === 'file:' && posix.normalize(parsed.pathname) !== parsed.pathname)
    throw unreachable(url, `${where}'s path is not a plain absolute path`);
  return parsed.href;
}

interface GitRun {
  url: string;
  deadline: number;
  /** The clone folder, measured against its cap while git runs. */
  root: string;
  options: CheckoutOptions;
  /** `git config --get-regexp`: exit status 1 says "no such key", an empty answer. */
  noMatchIsEmpty: boolean;
}

/** Runs git in its own process group; stopped whole at the deadline or when the clone outgrows its cap. */
function git(args: string[], run: GitRun): Promise<string> {
  const timeoutMs = Math.max(1, run.deadline - Date.now());
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...SAFE_CONFIG, ...args], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...inheritedEnvironment(),
        ...GIT_ENV,
        // The transports a source can name (no ext::, fd::, ssh), also for submodules and redirects: this overrides
        // git's own protocol.file.allow, so file:// is listed only when the caller may read this server's disk.
        GIT_ALLOW_PROTOCOL: run.options.allowFile ? 'https:http:file' : 'https:http',
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (stdout.length < 1024 * 1024) stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 64 * 1024) stderr += chunk;
    });
    let stopped: AppError | undefined;
    const stop = (why: AppError) => {
      if (stopped !== undefined) return;
      stopped = why;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(
      () => stop(unreachable(run.url, `git took longer than ${Math.round(timeoutMs / 1000)}s`)),
      timeoutMs,
    );
    const unwatch = watchSize(run.root, run.options.maxBytes, () => stop(tooLarge(run.url, run.options.maxBytes)));
    child.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      unwatch();
      reject(
        error.code === 'ENOENT'
          ? unreachable(run.url, 'the git program is not installed on this server')
          : unreachable(run.url, error.message),
      );
    });
    child.on('close', async (code) => {
      clearTimeout(timer);
      unwatch();
      if (stopped !== undefined) return reject(stopped);
      // A step too quick for the poll is measured once it is done.
      if ((await folderBytes(run.root, run.options.maxBytes)) > run.options.maxBytes)
        return reject(tooLarge(run.url, run.options.maxBytes));
      if (code === 0) return resolve(stdout);
      if (code === 1 && run.noMatchIsEmpty) return resolve('');
      reject(unreachable(run.url, gitProblem(stderr)));
    });
  });
}

/** Measures `folder` while git writes to it; calls `over` once it is past `maxBytes`. Returns the stop. */
function watchSize(folder: string, maxBytes: number, over: () => void): () => void {
  let measuring = false;
  const poll = setInterval(async () => {
    if (measuring) return;
    measuring = true;
    if ((await folderBytes(folder, maxBytes)) > maxBytes) over();
    measuring = false;
  }, SIZE_POLL_MS);
  return () => clearInterval(poll);
}

/** The bytes of the files under `folder` (links counted as themselves); stops counting past `cap`. */
async function folderBytes(folder: string, cap: number): Promise<number> {
  let total = 0;
  const pending = [folder];
  while (pending.length > 0 && total <= cap) {
    const current = pending.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch {
      continue; // Not there yet, or gone while git renames its temporary files.
    }
    for (const entry of entries) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else
        total += await lstat(path).then(
          (stats) => stats.size,
          () => 0,
        );
    }
  }
  return total;
}

/** Git's own last words, without the noise of hints. */
function gitProblem(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('hint:'));
  const fatal = lines.filter((line) => line.startsWith('fatal:') || line.startsWith('error:'));
  return (fatal.length > 0 ? fatal : lines).slice(0, 3).join('; ').slice(0, 500) || 'git failed';
}

function unreachable(url: string, problem: string): AppError {
  return new AppError(ErrorCode.IMPORT_SOURCE_UNREACHABLE, `Cannot read the git repository ${url}: ${problem}.`, {
    source: url,
  });
}

function tooLarge(url: string, maxBytes: number): AppError {
  return new AppError(
    ErrorCode.IMPORT_TOO_LARGE,
    `Cannot import from the git repository ${url}: its clone grew past ${maxBytes} bytes ([app.skills.import] ` +
      'max_clone_bytes), so git was stopped. Import from a smaller repository (one that holds the skills without ' +
      'large files) or ask an admin to raise the cap.',
    { source: url, maxBytes },
  );
}

/** A file:// URL (a submodule's) where this server's disk may not be read. */
function forbiddenFile(url: string): AppError {
  return new AppError(
    ErrorCode.IMPORT_SOURCE_FORBIDDEN,
    `Cannot read ${url}: a file:// URL reads this server's own disk, which only an admin's (or the CLI's) import of ` +
      'a git+file:// source may. Use an https:// URL.',
    { host: 'file', reason: "this server's own disk" },
  );
}

/**
 * The skill folders a path of a checkout names: the folder itself when it has SKILL.md, else every
 * folder under it that has one (not looking inside a skill). Symbolic links are never followed, on
 * the way to the path or under it. VALIDATION_FAILED when there is no such folder or no skill.
 */
export function skillFoldersAt(checkout: string, path: string): string[] {
  let current = checkout;
  for (const segment of path === '' ? [] : path.split('/')) {
    current = join(current, segment);
    const stats = existsSync(current) ? lstatSync(current) : undefined;
    if (stats === undefined || !stats.isDirectory())
      throw badPath(path, stats?.isSymbolicLink() ? `'${segment}' is a symbolic link` : 'there is no such folder');
  }
  const found: string[] = [];
  const search = (folder: string, relative: string, depth: number): void => {
    if (isFile(join(folder, 'SKILL.md'))) {
      found.push(relative);
      return;
    }
    if (depth >= MAX_SEARCH_DEPTH) return;
    for (const name of readdirSync(folder).sort()) {
      if (name === '.git' || name === 'node_modules') continue;
      const child = join(folder, name);
      if (lstatSync(child).isDirectory()) search(child, relative === '' ? name : `${relative}/${name}`, depth + 1);
    }
  };
  search(current, path, 0);
  if (found.length === 0) throw badPath(path, 'no folder there has a SKILL.md');
  return found;
}

/** A file or a link by that name: a link is then refused by the archive rules, by name, rather than passed over. */
function isFile(path: string): boolean {
  if (!existsSync(path) && !isLink(path)) return false;
  const stats = lstatSync(path);
  return stats.isFile() || stats.isSymbolicLink();
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function badPath(path: string, problem: string): AppError {
  const where = path === '' ? 'the repository root' : `'${path}'`;
  return new AppError(ErrorCode.VALIDATION_FAILED, `Nothing to import at ${where}: ${problem}.`, {
    problems: [`path: ${problem}`],
  });
}
