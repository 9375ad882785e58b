import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/** Who holds an embedded data folder, as its owner record says. */
export interface OwnerRecord {
  pid: number;
  /** Linux: field 22 of /proc/PID/stat (clock ticks after boot), so a reused pid is not taken for the owner. */
  startTime?: string;
  /** What the owner is, for the refusal line: "Skillhost", "a skillhost command". */
  name: string;
  /** Where its HTTP server answers, once it listens. */
  address?: string;
}

/** The owner record of the data folder `dataDir`: a folder beside it. */
export function embeddedOwnerFolder(dataDir: string): string {
  return join(dirname(dataDir), `${basename(dataDir)}.owner`);
}

/** A start on a data folder that a live process holds: nothing was touched. */
export class EmbeddedFolderInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly owner: OwnerRecord,
  ) {
    super(
      `The embedded PostgreSQL in ${dataDir} belongs to ${owner.name} (pid ` +
        `${owner.pid}${owner.address ? `, serving ${owner.address}` : ''}): ` +
        'stop it first, or set app.database.embedded_dir (SKILLHOST_DATABASE_EMBEDDED_DIR) to another folder, ' +
        'or set DATABASE_URL.',
    );
    this.name = 'EmbeddedFolderInUseError';
  }
}

/** Each attempt removes one stale record; more than a few in a row means something keeps writing them. */
const TAKEOVER_ATTEMPTS = 20;

/**
 * The one process that may run PostgreSQL on an embedded data folder, recorded beside it
 * (`<data>.owner/`) from before anything is initialised or launched until the server is stopped.
 * An owner that died (or whose pid now belongs to another process) leaves a stale record, which
 * the next start takes over.
 *
 * The record is a folder holding one file named after its owner (`<pid>-<nonce>.json`), because a
 * folder gives the two atomic steps a takeover needs: renaming a staged folder onto the record
 * succeeds only while there is none or it is empty, so exactly one of racing starts wins; and a
 * stale owner's file is removed by its own name, so a takeover never removes the record of an
 * owner that arrived meanwhile (removing a stale lock file made with `open(…, 'wx')` may remove
 * its successor's).
 */
export class EmbeddedPostgresOwner {
  private constructor(
    private readonly folder: string,
    private readonly file: string,
    private record: OwnerRecord,
  ) {}

  /** Becomes the owner of `dataDir`, or throws `EmbeddedFolderInUseError` naming the live one. */
  static acquire(dataDir: string, name: string): EmbeddedPostgresOwner {
    const folder = embeddedOwnerFolder(dataDir);
    const record: OwnerRecord = { pid: process.pid, startTime: startTimeOf(process.pid), name };
    const file = `${process.pid}-${randomBytes(6).toString('hex')}.json`;
    const staging = `${folder}.${file}.tmp`;
    mkdirSync(staging);
    try {
      writeFileSync(join(staging, file), recordText(record));
      for (let attempt = 0; attempt < TAKEOVER_ATTEMPTS; attempt++) {
        if (renamedOnto(staging, folder)) return new EmbeddedPostgresOwner(folder, file, record);
        const live = removeUnlessLive(folder);
        if (live !== undefined) throw new EmbeddedFolderInUseError(dataDir, live);
      }
      throw new Error(
        `Could not take over the owner record ${folder} of the embedded PostgreSQL: something keeps recreating ` +
          `it. Remove it once no Skillhost uses ${dataDir}.`,
      );
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }

  /** Adds where this process's HTTP server answers, for the line a second start prints. */
  noteAddress(address: string): void {
    this.record = { ...this.record, address };
    const temp = `${this.folder}.${this.file}.tmp`;
    try {
      writeFileSync(temp, recordText(this.record));
      renameSync(temp, join(this.folder, this.file));
    } catch {
      // The address only makes the refusal line friendlier; the record itself still holds the folder.
      rmSync(temp, { force: true });
    }
  }

  /** Idempotent; runs in an `exit` handler too, so it is synchronous. */
  release(): void {
    rmSync(join(this.folder, this.file), { force: true });
    try {
      rmdirSync(this.folder);
    } catch {
      // Already gone.
    }
  }
}

/**
 * The process that started a PostgreSQL without writing an owner record (a Skillhost older than
 * the records), when it still runs: the postmaster's parent, if it runs the same program as this
 * process. An orphan's parent is init or a subreaper instead. Undefined where /proc is missing.
 */
export function unrecordedOwnerOf(postmasterPid: number): OwnerRecord | undefined {
  const parent = statFields(postmasterPid)?.[STAT_PARENT];
  if (parent === undefined) return undefined;
  const pid = Number(parent);
  const program = programOf(pid);
  if (program === undefined || program !== programOf(process.pid) || !isAlive(pid)) return undefined;
  return { pid, name: 'the process that started it' };
}

/** Whether `pid` still runs the program that wrote `record` (not just any process with its pid). */
export function isOwnerAlive(record: OwnerRecord): boolean {
  if (!isAlive(record.pid)) return false;
  if (record.startTime === undefined) return true;
  const now = startTimeOf(record.pid);
  return now === undefined || now === record.startTime;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The name of the program `pid` runs (Linux, /proc/PID/comm), e.g. `postgres`, `node`. */
export function programOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Indexes into `statFields`: fields 4 and 22 of /proc/PID/stat. */
const STAT_PARENT = 1;
const STAT_START_TIME = 19;

export function startTimeOf(pid: number): string | undefined {
  return statFields(pid)?.[STAT_START_TIME];
}

/** /proc/PID/stat from field 3 on: field 2 (the program's name) may hold spaces and parentheses. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** False when `folder` exists and holds a record: the rename fails then, with no effect. */
function renamedOnto(staging: string, folder: string): boolean {
  try {
    renameSync(staging, folder);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * The live owner recorded in `folder`, else removes every entry (stale records, stray files) by
 * name and the folder itself, so the next rename can take its place.
 */
function removeUnlessLive(folder: string): OwnerRecord | undefined {
  let entries: string[];
  try {
    entries = readdirSync(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  for (const entry of entries) {
    const record = readRecord(join(folder, entry));
    if (record !== undefined && isOwnerAlive(record)) return record;
  }
  for (const entry of entries) rmSync(join(folder, entry), { recursive: true, force: true });
  try {
    rmdirSync(folder);
  } catch {
    // Gone already, or another start's record took its place: the next rename tells.
  }
  return undefined;
}

/** Undefined for a file that is gone or is not a record: a record is written whole before it is visible. */
function readRecord(file: string): OwnerRecord | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR') return undefined;
    throw error;
  }
  try {
    const { pid, startTime, name, address } = JSON.parse(text) as Partial<OwnerRecord>;
    if (!Number.isInteger(pid) || pid! <= 0 || typeof name !== 'string') return undefined;
    return {
      pid: pid!,
      name,
      ...(typeof startTime === 'string' ? { startTime } : {}),
      ...(typeof address === 'string' ? { address } : {}),
    };
  } catch {
    return undefined;
  }
}

function recordText(record: OwnerRecord): string {
  return `${JSON.stringify(record)}\n`;
}
