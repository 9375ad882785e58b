import { connect } from 'node:net';
import { type Dirent, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { query } from '../support/database.js';
import type { UploadBody } from '../support/skill-archives.js';

/**
 * One multipart part as a hostile client writes it: its header block verbatim (no trailing blank line), then its bytes.
 */
export interface RawPart {
  headers: string | Buffer;
  content: string | Buffer;
}

/** multipart/form-data from raw parts: nothing is escaped or checked, so a filename can hold anything. */
export function rawMultipart(
  parts: RawPart[],
  boundary = `----attack${Math.random().toString(16).slice(2)}`,
): UploadBody {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(
      Buffer.from(`--${boundary}\r\n`),
      Buffer.from(part.headers),
      Buffer.from('\r\n\r\n'),
      Buffer.from(part.content),
      Buffer.from('\r\n'),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A file part whose filename is written as given (bytes and all) inside `filename="…"`. */
export function filePart(filename: string | Buffer, content: string | Buffer): RawPart {
  return {
    headers: Buffer.concat([
      Buffer.from('Content-Disposition: form-data; name="file"; filename="'),
      Buffer.from(filename),
      Buffer.from('"\r\nContent-Type: application/octet-stream'),
    ]),
    content,
  };
}

/** What the store tables hold: "nothing was stored" is these counts unchanged. */
export async function storeCounts(databaseUrl: string): Promise<Record<string, number>> {
  const [row] = await query<Record<string, number>>(
    databaseUrl,
    `SELECT (SELECT count(*)::int FROM skill_blobs) AS blobs,
            (SELECT count(*)::int FROM skill_versions) AS versions,
            (SELECT count(*)::int FROM installed_skills) AS installed,
            (SELECT count(*)::int FROM installed_skill_versions) AS "installedVersions",
            (SELECT count(*)::int FROM skill_switches) AS switches`,
  );
  return row;
}

/**
 * Sends the head of an upload and part of its body, then drops the connection, as a client whose
 * network dies mid-upload. Resolves once the socket is closed on this side.
 */
export function abortedUpload(
  port: number,
  path: string,
  headers: Record<string, string>,
  declaredLength: number,
  sent: Buffer,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      const head = [
        `POST ${path} HTTP/1.1`,
        'Host: 127.0.0.1',
        `Content-Length: ${declaredLength}`,
        ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
        '',
        '',
      ].join('\r\n');
      socket.write(head);
      socket.write(sent, () => socket.destroy());
    });
    socket.on('error', reject);
    socket.on('close', () => resolve());
  });
}

/** Every file under a folder, relative to it (sorted), for "nothing was written outside the store". */
export function filesUnder(folder: string): string[] {
  const found: string[] = [];
  const walk = (current: string): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = join(current, entry.name);
      if (entry.isDirectory()) walk(full);
      else found.push(relative(folder, full));
    }
  };
  walk(folder);
  return found.sort();
}

/**
 * Waits until `count` sessions on the database wait for a lock (a request parked behind a test's
 * own transaction), so two requests can be made to interleave in one order every time. Gives up
 * after 10 s; the test's assertions then say what happened.
 */
export async function waitForLockWaiters(databaseUrl: string, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  const name = new URL(databaseUrl).pathname.slice(1);
  while (Date.now() < deadline) {
    const [row] = await query<{ n: number }>(
      databaseUrl,
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'",
      [name],
    );
    if (row.n >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
