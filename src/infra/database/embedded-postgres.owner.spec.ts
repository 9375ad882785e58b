import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import {
  EmbeddedFolderInUseError,
  embeddedOwnerFolder,
  EmbeddedPostgresOwner,
  type OwnerRecord,
  startTimeOf,
} from './embedded-postgres.owner.js';

const ADVICE =
  'stop it first, or set app.database.embedded_dir (SKILLHOST_DATABASE_EMBEDDED_DIR) to another folder, or set ' +
  'DATABASE_URL.';
const hasProc = existsSync('/proc/self/stat');

describe(EmbeddedPostgresOwner.name, () => {
  const root = mkdtempSync(join(tmpdir(), 'skillhost-owner-'));
  let dataDir: string;
  const held: EmbeddedPostgresOwner[] = [];
  const sleepers: ChildProcess[] = [];
  const acquire = (name = 'Skillhost') => {
    const owner = EmbeddedPostgresOwner.acquire(dataDir, name);
    held.push(owner);
    return owner;
  };
  const records = () =>
    readdirSync(embeddedOwnerFolder(dataDir)).map(
      (file) => JSON.parse(readFileSync(join(embeddedOwnerFolder(dataDir), file), 'utf8')) as OwnerRecord,
    );
  /** A record as another process would have left it. */
  const plant = (record: OwnerRecord, file = `${record.pid}-0123456789ab.json`) => {
    mkdirSync(embeddedOwnerFolder(dataDir), { recursive: true });
    writeFileSync(join(embeddedOwnerFolder(dataDir), file), JSON.stringify(record));
  };
  const refusal = () => {
    try {
      acquire();
    } catch (error) {
      return error as EmbeddedFolderInUseError;
    }
    throw new Error('the second acquire did not refuse');
  };
  /** A live process that is not a Skillhost: what a reused pid looks like. */
  const sleeper = () => {
    const child = spawn('sleep', ['600'], { stdio: 'ignore' });
    sleepers.push(child);
    return child.pid!;
  };

  beforeEach(() => {
    dataDir = join(mkdtempSync(join(root, 'case-')), 'postgres');
  });
  afterEach(() => {
    for (const owner of held.splice(0)) owner.release();
  });
  afterAll(() => {
    for (const child of sleepers) child.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });

  it('records its owner beside the data folder, refuses a second owner naming it, and is gone once released', () => {
    const sut = acquire('a skillhost command');
    expect(embeddedOwnerFolder(dataDir)).toBe(`${dataDir}.owner`);
    expect(records()).toEqual([
      { pid: process.pid, name: 'a skillhost command', ...(hasProc ? { startTime: startTimeOf(process.pid) } : {}) },
    ]);

    const error = refusal();
    expect(error).toBeInstanceOf(EmbeddedFolderInUseError);
    expect(error.message).toBe(
      `The embedded PostgreSQL in ${dataDir} belongs to a skillhost command (pid ${process.pid}): ${ADVICE}`,
    );
    // The refused attempt left nothing behind.
    expect(readdirSync(join(dataDir, '..'))).toEqual(['postgres.owner']);

    sut.release();
    expect(existsSync(embeddedOwnerFolder(dataDir))).toBe(false);
    expect(() => acquire()).not.toThrow();
  });

  it('names the address it serves once it is noted', () => {
    acquire().noteAddress('http://127.0.0.1:3000');
    expect(refusal().message).toBe(
      `The embedded PostgreSQL in ${dataDir} belongs to Skillhost (pid ${process.pid}, serving ` +
        `http://127.0.0.1:3000): ${ADVICE}`,
    );
  });

  it('takes over the record of an owner that is gone', async () => {
    const gone = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await new Promise((resolve) => gone.once('exit', resolve));
    plant({ pid: gone.pid!, name: 'Skillhost', address: 'http://127.0.0.1:3000' });
    acquire();
    expect(records()).toEqual([expect.objectContaining({ pid: process.pid })]);
  });

  (hasProc ? it : it.skip)(
    'takes over the record of a pid that now belongs to another process (another start time), not of the one ' +
      'that wrote it',
    () => {
      const pid = sleeper();
      plant({ pid, startTime: '1', name: 'Skillhost' });
      acquire().release();

      plant({ pid, startTime: startTimeOf(pid), name: 'Skillhost' });
      expect(refusal().message).toBe(
        `The embedded PostgreSQL in ${dataDir} belongs to Skillhost (pid ${pid}): ${ADVICE}`,
      );
    },
  );

  it('without a start time (no /proc where it was written), a live pid is the owner', () => {
    const pid = sleeper();
    plant({ pid, name: 'Skillhost' });
    expect(refusal().owner).toEqual({ pid, name: 'Skillhost' });
  });

  it('takes over a record folder holding no record: empty, unreadable JSON, stray files', () => {
    mkdirSync(embeddedOwnerFolder(dataDir), { recursive: true });
    acquire().release();
    mkdirSync(embeddedOwnerFolder(dataDir));
    writeFileSync(join(embeddedOwnerFolder(dataDir), 'half.json'), '{"pid": 12');
    writeFileSync(join(embeddedOwnerFolder(dataDir), '.DS_Store'), '');
    mkdirSync(join(embeddedOwnerFolder(dataDir), 'stray'));
    acquire();
    expect(records()).toEqual([expect.objectContaining({ pid: process.pid })]);
  });
});
