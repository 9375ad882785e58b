import { execFile } from 'node:child_process';
import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { AppError, ErrorCode } from '@skillhost/core';
import { inheritedEnvironment } from '../../../config/inherited-environment.js';

/**
 * A shallow checkout of one commit of a git repository, made with the `git` binary so that nothing
 * in the repository runs: hooks go to /dev/null (a repository's own hooks are never fetched, and
 * this turns off any the user's configuration names), the new repository gets no template,
 * submodules are not fetched, `ext::` transports are off, and git never prompts for a password.
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
];
/** Git may speak only the transports a source can name (no ext::, fd::, ssh), even when a server redirects. */
const GIT_ENV = {
  GIT_ALLOW_PROTOCOL: 'https:http:file',
  GIT_TERMINAL_PROMPT: '0',
  GIT_ASKPASS: 'true',
  SSH_ASKPASS: 'true',
  GIT_LFS_SKIP_SMUDGE: '1',
};
/** How deep "every skill under a path" looks for folders with SKILL.md. */
const MAX_SEARCH_DEPTH = 6;

export interface GitCheckout {
  commit: string;
}

/** Fetches `ref` (the remote's HEAD without one) at depth 1 into the empty folder `into` and checks it out. */
export async function checkoutGit(
  url: string,
  ref: string | undefined,
  into: string,
  timeoutMs: number,
): Promise<GitCheckout> {
  const deadline = Date.now() + timeoutMs;
  const run = (args: string[]) => git(args, Math.max(1, deadline - Date.now()), url);
  await run(['init', '--quiet', '--template=', into]);
  await run([
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
  return { commit };
}

function git(args: string[], timeoutMs: number, url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      [...SAFE_CONFIG, ...args],
      {
        timeout: timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: 1024 * 1024,
        env: { ...inheritedEnvironment(), ...GIT_ENV },
      },
      (error, stdout, stderr) => {
        if (error === null) return resolve(stdout);
        if ((error as NodeJS.ErrnoException).code === 'ENOENT')
          return reject(unreachable(url, 'the git program is not installed on this server'));
        if (error.killed) return reject(unreachable(url, `git took longer than ${Math.round(timeoutMs / 1000)}s`));
        reject(unreachable(url, gitProblem(stderr)));
      },
    );
  });
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
