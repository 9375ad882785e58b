import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { clientEnvironment } from '../config/client-environment.js';
import { type CliIo, CommandFailure, environmentKey, UsageError } from './cli-io.js';
import { serverOption } from './credentials-file.js';
import { storedBearer } from './stored-login.js';
import { folderState, installSkill, removeSkill, sha256 } from './sync/sync-folder.js';
import { fetchFile, fetchIndex, fetchVersions, ServerProblem } from './sync/sync-http.js';
import {
  checkIndex,
  type CheckedIndex,
  checkVersions,
  IndexRefused,
  type RemoteSkill,
  type RemoteVersion,
  type SyncCaps,
} from './sync/sync-index.js';
import { type LockedSkill, readLock, type SyncLock, writeLock } from './sync/sync-lock.js';
import { type PlannedChange, planTarget, type SyncAction } from './sync/sync-plan.js';

/** Each client's documented skills folder: under the home folder, and (`--project`) under the working folder. */
const TARGETS: Record<string, { user: string; project: string }> = {
  claude: { user: '.claude/skills', project: '.claude/skills' },
  codex: { user: '.codex/skills', project: '.codex/skills' },
  gemini: { user: '.gemini/skills', project: '.gemini/skills' },
  cursor: { user: '.cursor/skills', project: '.cursor/skills' },
  opencode: { user: '.config/opencode/skills', project: '.opencode/skills' },
  agents: { user: '.agents/skills', project: '.agents/skills' },
};

/** The MCP Skills extension's per-skill limits (512 files, 16 MiB), which the server publishes within. */
const DEFAULT_CAPS: SyncCaps = { fileBytes: 16 * 1024 * 1024, skillBytes: 16 * 1024 * 1024, skillFiles: 512 };
const PIN = /^([A-Za-z0-9][A-Za-z0-9_-]{0,63})@(sha256:[0-9a-f]{64})$/;

interface SyncOptions {
  server: URL;
  /** The key from the environment (SKILLHOST_API_KEY or `--key-env`); it wins over what login stored. */
  envKey: string | undefined;
  environment: { env: Record<string, string | undefined>; home: string };
  /** This run's bearer credential: the environment's key, else the stored login's (an OAuth token refreshed). */
  key: string | undefined;
  dirs: string[];
  dryRun: boolean;
  json: boolean;
  pins: Map<string, string>;
  unpins: Set<string>;
  caps: SyncCaps;
  /** `--watch`: seconds between runs. */
  watchSeconds?: number;
}

interface TargetReport {
  dir: string;
  notModified: boolean;
  problem?: string;
  changes: Omit<PlannedChange, 'remote'>[];
}

/**
 * `skillhost sync`: mirrors the skills the key's user may see into agents' skill folders. Each skill
 * is its own unit: one the server offers wrongly is refused (its folder left as it was), the others
 * are synced, and the exit code is 1.
 */
export async function syncCommand(args: string[], io: CliIo): Promise<number> {
  const options = syncOptions(args, io);
  if (options.watchSeconds === undefined) return runOnce(options, io);
  let code = 0;
  while (io.signal?.aborted !== true) {
    code = await runOnce(options, io);
    // Pins and unpins are recorded by the first run; later runs only follow the server.
    options.pins.clear();
    options.unpins.clear();
    await sleep(options.watchSeconds * 1000, io.signal);
  }
  return code;
}

function syncOptions(args: string[], io: CliIo): SyncOptions {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      server: { type: 'string' },
      'key-env': { type: 'string' },
      target: { type: 'string', multiple: true },
      project: { type: 'boolean' },
      dir: { type: 'string', multiple: true },
      'dry-run': { type: 'boolean' },
      watch: { type: 'boolean' },
      interval: { type: 'string' },
      pin: { type: 'string', multiple: true },
      unpin: { type: 'string', multiple: true },
      'max-file-bytes': { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  if (positionals.length > 0) throw new UsageError(`sync takes no positional arguments; got '${positionals[0]}'.`);
  const { env, home } = clientEnvironment(io);
  // No key at all is fine for a server that needs none (auth `auto` on a loopback address); one named must be there.
  const key = environmentKey(env, values['key-env']);
  if (values.interval !== undefined && !/^[1-9][0-9]{0,5}$/.test(values.interval))
    throw new UsageError(`--interval takes whole seconds (1 or more); got '${values.interval}'.`);
  if (values.interval !== undefined && values.watch !== true) throw new UsageError('--interval goes with --watch.');
  if (values.watch && values['dry-run'])
    throw new UsageError('--dry-run changes nothing: it does not go with --watch.');
  const maxFile = values['max-file-bytes'];
  if (maxFile !== undefined && !/^[1-9][0-9]{0,9}$/.test(maxFile))
    throw new UsageError(`--max-file-bytes takes a byte count; got '${maxFile}'.`);
  const server = serverOption(values.server, 'sync');
  return {
    server,
    envKey: key,
    environment: { env, home },
    key: undefined,
    dirs: targetDirs(values.target ?? [], values.dir ?? [], values.project === true, io.cwd, home),
    dryRun: values['dry-run'] === true,
    json: values.json === true,
    pins: pinsOf(values.pin ?? []),
    unpins: new Set(values.unpin ?? []),
    caps: maxFile === undefined ? DEFAULT_CAPS : { ...DEFAULT_CAPS, fileBytes: Number(maxFile) },
    ...(values.watch === true ? { watchSeconds: Number(values.interval ?? 60) } : {}),
  };
}

function targetDirs(targets: string[], dirs: string[], project: boolean, cwd: string, home: string): string[] {
  if (targets.length === 0 && dirs.length === 0)
    throw new UsageError(`sync needs --target ${Object.keys(TARGETS).join('|')} or --dir PATH.`);
  if (project && targets.length === 0) throw new UsageError('--project goes with --target.');
  const resolved = targets.map((target) => {
    const folders = TARGETS[target];
    if (folders === undefined)
      throw new UsageError(`--target must be one of ${Object.keys(TARGETS).join(', ')}; got '${target}'.`);
    return project ? resolve(cwd, folders.project) : resolve(home, folders.user);
  });
  return [...new Set([...resolved, ...dirs.map((dir) => resolve(cwd, dir))])];
}

function pinsOf(pins: string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const pin of pins) {
    const match = PIN.exec(pin);
    if (match === null) throw new UsageError(`--pin takes NAME@sha256:<64 hex> (the skill digest); got '${pin}'.`);
    map.set(match[1], match[2]);
  }
  return map;
}

async function runOnce(options: SyncOptions, io: CliIo): Promise<number> {
  const locks = new Map<string, SyncLock | Error>();
  for (const dir of options.dirs) locks.set(dir, lockOf(dir));
  let index: CheckedIndex | undefined;
  let etag: string | undefined;
  let problem: string | undefined;
  try {
    // Each run asks for the stored login afresh: a `--watch` outlives an access token, which is refreshed here.
    options.key = options.envKey ?? (await storedBearer(options.server, options.environment));
    const answer = await fetchIndex(options.server, options.key, sharedEtag(options, locks));
    if (!answer.notModified) {
      index = checkIndex(answer.text, options.server, options.caps);
      etag = answer.etag;
    }
  } catch (error) {
    const ofThisRun =
      error instanceof ServerProblem ||
      error instanceof IndexRefused ||
      // A watch goes on past a refresh that failed (the server down for a moment); a single run stops with it.
      (error instanceof CommandFailure && options.watchSeconds !== undefined);
    if (!ofThisRun) throw error;
    problem = `nothing changed: ${error.message}`;
  }
  const reports: TargetReport[] = [];
  const versions = versionsOnce(options);
  for (const dir of options.dirs) {
    const lock = locks.get(dir)!;
    if (problem !== undefined || lock instanceof Error)
      reports.push({ dir, notModified: false, problem: problem ?? (lock as Error).message, changes: [] });
    else if (index === undefined) reports.push({ dir, notModified: true, changes: [] });
    else reports.push(await syncTargetOrSay(dir, lock, index, etag, options, versions));
  }
  printReports(reports, options, io);
  return reports.some((report) => report.problem !== undefined || report.changes.some((c) => c.action === 'refused'))
    ? 1
    : 0;
}

/** The lock of a target folder that sync may write in: a link there is refused, never followed. */
function lockOf(dir: string): SyncLock | Error {
  try {
    if (folderState(dir) === 'other')
      return new Error(`${dir} is a symbolic link or a file: sync writes only into a real folder`);
    return readLock(dir);
  } catch (error) {
    return new Error(`stopped: ${(error as Error).message}`);
  }
}

/**
 * `If-None-Match` only when every target's last run took this very index, no pin asks for a look, and
 * every folder sync owns is still there (one removed by hand, to take an update over an edit, is
 * fetched again though the index did not change).
 */
function sharedEtag(options: SyncOptions, locks: Map<string, SyncLock | Error>): string | undefined {
  if (options.pins.size > 0 || options.unpins.size > 0) return undefined;
  const tags = [...locks.entries()].map(([dir, lock]) =>
    lock instanceof Error || Object.keys(lock.skills).some((name) => folderState(join(dir, name)) !== 'folder')
      ? undefined
      : lock.etag,
  );
  return tags.every((tag) => tag !== undefined && tag === tags[0]) ? tags[0] : undefined;
}

/** A folder sync cannot write (permissions, a full disk) is that target's problem, said in one line. */
async function syncTargetOrSay(...args: Parameters<typeof syncTarget>): Promise<TargetReport> {
  try {
    return await syncTarget(...args);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === undefined || !code.startsWith('E')) throw error;
    return { dir: args[0], notModified: false, problem: `stopped: ${(error as Error).message}`, changes: [] };
  }
}

/** The server's versions.json, fetched at most once a run, and only when a pin needs it. */
type VersionsList = () => Promise<Map<string, RemoteVersion[]>>;

function versionsOnce(options: SyncOptions): VersionsList {
  let list: Promise<Map<string, RemoteVersion[]>> | undefined;
  return () => {
    list ??= fetchVersions(options.server, options.key).then((text) =>
      checkVersions(text, options.server, options.caps),
    );
    return list;
  };
}

async function syncTarget(
  dir: string,
  lock: SyncLock,
  index: CheckedIndex,
  etag: string | undefined,
  options: SyncOptions,
  versions: VersionsList,
): Promise<TargetReport> {
  const pinned = await pinnedVersions(dir, lock, index.skills, options, versions);
  if (typeof pinned === 'string') return { dir, notModified: false, problem: pinned, changes: [] };
  // A pinned version the index does not offer now stands in for the one it does.
  const remote = index.skills.map((skill) => pinned.get(skill.name) ?? skill);
  const pinProblem = applyPins(lock, remote, options);
  if (pinProblem !== undefined) return { dir, notModified: false, problem: pinProblem, changes: [] };
  if (!options.dryRun) mkdirSync(dir, { recursive: true });
  const planned = planTarget(dir, lock, remote, index.refused);
  const changes: Omit<PlannedChange, 'remote'>[] = [];
  for (const change of planned) {
    const { remote, ...shown } = change;
    if (options.dryRun) {
      changes.push(shown);
      continue;
    }
    changes.push(await applyChange(dir, lock, change, remote, options));
  }
  if (!options.dryRun) {
    // The ETag is kept only when the index was taken whole: a refused skill is asked for again next time.
    const whole = changes.every((change) => change.action !== 'refused');
    writeLock(dir, { ...lock, ...(whole && etag !== undefined ? { etag } : { etag: undefined }) });
  }
  return { dir, notModified: false, changes };
}

/**
 * The versions this target is to hold that the index does not offer now, from the server's versions.json: one a
 * `--pin` names (by its skill-level digest, or the store's version digest, which becomes the skill-level one), and
 * a pinned skill's whose folder was removed by hand. A pin versions.json cannot answer is the target's problem; a
 * gone folder it cannot answer stays as the plan says (pinned, folder gone).
 */
async function pinnedVersions(
  dir: string,
  lock: SyncLock,
  offered: readonly RemoteSkill[],
  options: SyncOptions,
  versions: VersionsList,
): Promise<Map<string, RemoteSkill> | string> {
  const wanted = new Map<string, RemoteSkill>();
  for (const skill of offered) {
    const pin = options.pins.get(skill.name);
    const locked = lock.skills[skill.name];
    const asked =
      pin !== undefined
        ? pin !== skill.digest && pin !== locked?.digest
          ? pin
          : undefined
        : locked?.pinned === true && locked.digest !== skill.digest && folderState(join(dir, skill.name)) === 'absent'
          ? locked.digest
          : undefined;
    if (asked === undefined) continue;
    let listed: Map<string, RemoteVersion[]>;
    try {
      listed = await versions();
    } catch (error) {
      if (!(error instanceof ServerProblem || error instanceof IndexRefused)) throw error;
      if (pin === undefined) continue;
      return `--pin ${skill.name}@${pin}: the server's versions cannot be read (${error.message}); nothing changed`;
    }
    const found = listed
      .get(skill.name)
      ?.find((version) => version.digest === asked || version.versionDigest === asked);
    if (found === undefined) continue;
    wanted.set(skill.name, found);
    if (pin !== undefined) options.pins.set(skill.name, found.digest);
  }
  return wanted;
}

/**
 * `--pin NAME@DIGEST` marks the version installed, or the one the server has (now, or listed in versions.json: then
 * installed); `--unpin` frees it.
 */
function applyPins(lock: SyncLock, remote: readonly RemoteSkill[], options: SyncOptions): string | undefined {
  for (const name of options.unpins) {
    if (lock.skills[name] === undefined) return `--unpin ${name}: sync has no skill '${name}' here`;
    delete lock.skills[name].pinned;
  }
  for (const [name, digest] of options.pins) {
    const locked = lock.skills[name];
    const offered = remote.find((skill) => skill.name === name);
    if (locked?.digest === digest) locked.pinned = true;
    // Taken (and pinned) by this run: the plan adds or updates it like any other.
    else if (offered?.digest === digest) delete locked?.pinned;
    else
      return (
        `--pin ${name}@${digest}: that version is neither installed here (` +
        `${locked?.digest ?? 'not synced'}) nor offered by the server now (${offered?.digest ?? 'not offered'}), ` +
        "nor among the versions the server's versions.json lists"
      );
  }
  return undefined;
}

async function applyChange(
  dir: string,
  lock: SyncLock,
  change: PlannedChange,
  remote: RemoteSkill | undefined,
  options: SyncOptions,
): Promise<Omit<PlannedChange, 'remote'>> {
  const { remote: _, ...shown } = change;
  switch (change.action) {
    case 'add':
    case 'update':
      try {
        const bytes = await download(dir, lock.skills[change.name], remote!, options.key);
        installSkill(dir, remote!, bytes);
      } catch (error) {
        if (!(error instanceof ServerProblem)) throw error;
        return {
          action: 'refused',
          name: change.name,
          digest: change.digest,
          reason: `nothing changed: ${error.message}`,
        };
      }
      lock.skills[change.name] = lockedOf(
        remote!,
        options.server,
        pinnedAfter(lock.skills[change.name], remote!, options),
      );
      return shown;
    case 'remove':
      removeSkill(dir, change.name);
      delete lock.skills[change.name];
      return shown;
    case 'release':
    case 'forget':
      delete lock.skills[change.name];
      return shown;
    default:
      return shown;
  }
}

/**
 * Every file of the version, verified: a file the folder already holds unchanged (same path and
 * digest, checked again) is read from it; the rest is downloaded. Nothing is written here.
 */
async function download(
  dir: string,
  locked: LockedSkill | undefined,
  skill: RemoteSkill,
  key: string | undefined,
): Promise<Map<string, Buffer>> {
  const local = new Map((locked?.files ?? []).map((file) => [file.path, file.digest]));
  const bytes = new Map<string, Buffer>();
  for (const file of skill.files) {
    const reused =
      local.get(file.path) === file.digest ? readVerified(join(dir, skill.name, file.path), file.digest) : undefined;
    bytes.set(file.path, reused ?? (await fetchFile(file, key)));
  }
  return bytes;
}

function readVerified(path: string, digest: string): Buffer | undefined {
  if (folderState(path) !== 'other') return undefined;
  try {
    const bytes = readFileSync(path);
    return sha256(bytes) === digest ? bytes : undefined;
  } catch {
    return undefined;
  }
}

/** Pinned by this run's `--pin`, or still pinned: a pinned version whose folder was gone, taken again. */
function pinnedAfter(before: LockedSkill | undefined, skill: RemoteSkill, options: SyncOptions): boolean {
  return options.pins.get(skill.name) === skill.digest || (before?.pinned === true && before.digest === skill.digest);
}

function lockedOf(skill: RemoteSkill, server: URL, pinned: boolean): LockedSkill {
  return {
    digest: skill.digest,
    source: server.href,
    files: skill.files.map((file) => ({ path: file.path, digest: file.digest })),
    ...(pinned ? { pinned: true } : {}),
  };
}

const COUNTED: SyncAction[] = ['add', 'update', 'remove', 'keep', 'pinned', 'refused'];
const PAST: Record<SyncAction, string> = {
  add: 'added',
  update: 'updated',
  remove: 'removed',
  release: 'released',
  forget: 'forgotten',
  keep: 'kept',
  pinned: 'pinned',
  refused: 'refused',
};

function printReports(reports: TargetReport[], options: SyncOptions, io: CliIo): void {
  if (options.json) {
    io.out(JSON.stringify({ server: options.server.href, dryRun: options.dryRun, targets: reports }, null, 2));
    return;
  }
  for (const report of reports) {
    if (report.problem !== undefined) io.err(`${report.dir}: ${report.problem}`);
    else if (report.notModified) io.out(`${report.dir}: up to date (the index has not changed since the last sync)`);
    else {
      // Refusals and edited folders are warnings: stderr, so a script reading stdout sees the changes alone.
      for (const change of report.changes)
        (change.action === 'refused' || change.edited !== undefined ? io.err : io.out)(changeLine(change, options));
      io.out(summaryLine(report, options));
    }
  }
}

/** `add pdf sha256:1a2b3c4d5e6f`, `keep notes sha256:…: edited here (SKILL.md): …`. */
function changeLine(change: Omit<PlannedChange, 'remote'>, options: SyncOptions): string {
  const digest = change.digest === undefined ? '' : ` ${change.digest.slice(0, 'sha256:'.length + 12)}`;
  const reason = change.reason === undefined ? '' : `: ${change.reason}`;
  const would = options.dryRun && change.action !== 'refused' ? 'would ' : '';
  return `${would}${change.action} ${change.name}${digest}${reason}`;
}

function summaryLine(report: TargetReport, options: SyncOptions): string {
  // A released folder is kept too: the count says what is on disk.
  const counts = COUNTED.map((action) => {
    const count = report.changes.filter((c) => c.action === action || (action === 'keep' && c.action === 'release'));
    return `${count.length} ${PAST[action]}`;
  });
  const prefix = options.dryRun ? 'Dry run, nothing changed: ' : '';
  return `${prefix}${report.dir}: ${counts.join(', ')} (from ${options.server.href})`;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((done) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        done();
      },
      { once: true },
    );
  });
}
