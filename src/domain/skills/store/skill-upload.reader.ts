import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32, createGunzip } from 'node:zlib';
import { Busboy } from '@fastify/busboy';
import tar from 'tar-stream';
import yauzl from 'yauzl';
import { AppError, ErrorCode } from '@skillhost/core';

/**
 * Turns one skill upload (a zip, a tar.gz or tar, or a multipart form with one part per file) into
 * a checked list of files in memory. Everything a hostile client can put in an archive is refused
 * with INVALID_ARCHIVE or PAYLOAD_TOO_LARGE before anything is returned: paths that leave the
 * folder or would mean something else on another system, special entries (symlinks, links,
 * devices), duplicates, and bombs (bytes are counted as they are inflated, never trusted from
 * headers). The request body is never destroyed, so the error answer can still reach the client.
 */

export interface UploadedFile {
  /** Normalised relative POSIX path, no leading './'. */
  path: string;
  bytes: Buffer;
}

export interface UploadLimits {
  /** Unpacked bytes: the sum of the files' sizes. */
  maxBytes: number;
  maxFiles: number;
}

export type UploadKind = 'zip' | 'tar.gz' | 'tar' | 'multipart';

const KINDS_BY_MEDIA_TYPE: Readonly<Record<string, UploadKind>> = {
  'application/zip': 'zip',
  'application/x-zip-compressed': 'zip',
  'application/gzip': 'tar.gz',
  'application/x-gzip': 'tar.gz',
  'application/x-compressed-tar': 'tar.gz',
  'application/x-tar': 'tar',
  'multipart/form-data': 'multipart',
};

/** Every media type an upload may be sent as (lower case, no parameters). */
export const UPLOAD_MEDIA_TYPES: readonly string[] = Object.keys(KINDS_BY_MEDIA_TYPE);

const MAX_PATH_BYTES = 1024;
const MAX_PATH_DEPTH = 16;
/**
 * What an archive may weigh beyond its files' bytes: headers, names, padding and end records (a tar
 * with a long pax name takes about 2.5 KiB per file, a zip with 1 KiB names about 2.2 KiB). It bounds
 * both the request body and the inflated tar stream, so an archive of nothing but padding or zeros
 * stops there.
 */
const FRAMING_PER_FILE = 3 * 1024;
const FRAMING_BASE = 1024 * 1024;

/** The kind for a Content-Type header (parameters such as a multipart boundary are ignored), else undefined. */
export function uploadKindOf(contentType: string | undefined): UploadKind | undefined {
  if (contentType === undefined) return undefined;
  const mediaType = contentType.split(';')[0].trim().toLowerCase();
  return Object.hasOwn(KINDS_BY_MEDIA_TYPE, mediaType) ? KINDS_BY_MEDIA_TYPE[mediaType] : undefined;
}

/**
 * Reads the whole upload; throws AppError on any problem (nothing partial is returned):
 * INVALID_ARCHIVE, PAYLOAD_TOO_LARGE past `limits` or the body cap (`limits.maxBytes` + 1 MiB +
 * 3 KiB per allowed file), UNSUPPORTED_MEDIA_TYPE for a content type that is no upload kind.
 */
export async function readSkillUpload(
  body: NodeJS.ReadableStream | Readable,
  contentType: string,
  limits: UploadLimits,
): Promise<UploadedFile[]> {
  const kind = uploadKindOf(contentType);
  if (kind === undefined) throw unsupportedUpload(contentType);
  const collector = new UploadCollector(limits);
  const source = limitedBody(body instanceof Readable ? body : new Readable().wrap(body), maxArchiveBytes(limits));
  try {
    switch (kind) {
      case 'zip':
        await readZip(source, collector);
        break;
      case 'tar.gz':
      case 'tar':
        await readTar(source, kind === 'tar.gz', collector, limits);
        break;
      case 'multipart':
        await readMultipart(source, contentType, collector, limits);
        break;
    }
  } finally {
    source.destroy();
  }
  return collector.result();
}

/**
 * One skill per upload: SKILL.md at the root, or every file inside one top folder that has
 * SKILL.md. Returns the files re-rooted at the skill folder, and the top folder's name when there
 * was one. macOS metadata (`__MACOSX/`, `.DS_Store`, AppleDouble `._*` files) is dropped first:
 * Finder's "Compress" and macOS tar add it next to the skill, and it would otherwise count as a
 * second top-level entry.
 */
export function skillRootOf(files: readonly UploadedFile[]): { folder?: string; files: UploadedFile[] } {
  const kept = files.filter((file) => !isMacOsMetadata(file));
  if (kept.some((file) => file.path === 'SKILL.md')) return { files: kept };
  const tops = new Set(kept.map((file) => topLevelEntry(file.path)));
  const [only] = tops;
  if (tops.size === 1 && only.endsWith('/') && kept.some((file) => file.path === `${only}SKILL.md`)) {
    return {
      folder: only.slice(0, -1),
      files: kept.map((file) => ({ path: file.path.slice(only.length), bytes: file.bytes })),
    };
  }
  throw noSkillRoot(kept, [...tops]);
}

/**
 * A folder on disk (a git checkout) read with the same rules as an archive: each path checked, the
 * file and byte caps, and anything but a regular file or folder (symlink, FIFO, socket, device)
 * refused rather than skipped, as an archive entry of that kind would be. A `.git` folder is left out.
 */
export function readSkillFolder(folder: string, limits: UploadLimits): UploadedFile[] {
  const collector = new UploadCollector(limits);
  const walk = (relative: string, depth: number): void => {
    for (const name of readdirSync(join(folder, relative)).sort()) {
      if (name === '.git') continue;
      const path = relative === '' ? name : `${relative}/${name}`;
      const stats = lstatSync(join(folder, path));
      if (stats.isDirectory()) {
        if (depth >= MAX_PATH_DEPTH)
          throw invalidEntry(path, `Folder '${shown(path)}' is more than ${MAX_PATH_DEPTH} levels deep.`);
        walk(path, depth + 1);
      } else if (stats.isFile()) {
        const checked = collector.admit(path, stats.size);
        const bytes = readFileSync(join(folder, path));
        collector.take(bytes.length);
        collector.add(checked, bytes);
      } else {
        throw specialEntry(path, stats.isSymbolicLink() ? 'symbolic link' : 'special file');
      }
    }
  };
  walk('', 0);
  return collector.result();
}

/** Files from elsewhere (another server's index) held to the archive rules: paths, duplicates, caps. */
export function checkUploadedFiles(files: readonly UploadedFile[], limits: UploadLimits): UploadedFile[] {
  const collector = new UploadCollector(limits);
  for (const file of files) {
    const path = collector.admit(file.path, file.bytes.length);
    collector.take(file.bytes.length);
    collector.add(path, file.bytes);
  }
  return collector.result();
}

/**
 * An archive entry's path made relative and POSIX (`./a//b` → `a/b`), or an INVALID_ARCHIVE
 * saying why it can't be. Refuses rather than guesses: a backslash may be a separator on Windows
 * and a name character elsewhere, and `a/../b` stays inside but is never what a tool writes.
 */
export function normalizeEntryPath(name: string): string {
  const segments = checkedSegments(name);
  if (segments.length === 0) {
    throw invalidEntry(
      name,
      `Entry '${shown(name)}' names no file; give each file a relative path such as SKILL.md or scripts/run.sh.`,
    );
  }
  return segments.join('/');
}

/** The path's segments without '' and '.', after every check; empty for a folder entry like './'. */
function checkedSegments(name: string): string[] {
  const problem = pathProblem(name);
  if (problem !== undefined) throw invalidEntry(name, `Entry '${shown(name)}' ${problem}`);
  const segments = name.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.length > MAX_PATH_DEPTH) {
    throw invalidEntry(
      name,
      `Entry '${shown(name)}' is ${segments.length} levels deep; paths may be at most ${MAX_PATH_DEPTH} levels deep.`,
    );
  }
  return segments;
}

function pathProblem(name: string): string | undefined {
  if (name === '') return 'has an empty name; every file needs a relative path such as SKILL.md.';
  if (/[\p{Cc}\p{Cs}]/u.test(name))
    return 'has a control character (NUL, newline, …) or a broken character in its name; rename the file.';
  if (/^[\\/]/.test(name) || /^[A-Za-z]:/.test(name))
    return 'is an absolute path; archive paths must be relative to the skill folder, e.g. scripts/run.sh.';
  if (name.includes('\\'))
    return (
      "has a '\\' in its path; use '/' as the folder separator (on Windows, use a tool that writes '/' in " +
      'archives, or tar).'
    );
  if (Buffer.byteLength(name) > MAX_PATH_BYTES)
    return `is ${Buffer.byteLength(name)} bytes long; paths may be at most ${MAX_PATH_BYTES} bytes.`;
  if (name.split('/').includes('..')) return "has a '..' segment; archive paths must stay inside the skill folder.";
  return undefined;
}

/** Counts what an upload holds as it is read, and refuses past the limits or on a clash of paths. */
class UploadCollector {
  private readonly files: UploadedFile[] = [];
  private readonly filePaths = new Set<string>();
  private readonly folderPaths = new Set<string>();
  private admitted = 0;
  private bytes = 0;

  constructor(private readonly limits: UploadLimits) {}

  /**
   * Checks a file entry before its bytes are read: its path, the file count and the size it declares. Returns its path.
   */
  admit(name: string, declaredSize: number): string {
    const path = normalizeEntryPath(name);
    if (++this.admitted > this.limits.maxFiles) throw tooManyFiles(this.limits);
    if (declaredSize > this.limits.maxBytes - this.bytes) throw tooManyBytes(this.limits, path);
    this.register(path);
    return path;
  }

  /** Counts bytes really read (inflated), whatever the headers said. */
  take(byteCount: number): void {
    this.bytes += byteCount;
    if (this.bytes > this.limits.maxBytes) throw tooManyBytes(this.limits);
  }

  add(path: string, bytes: Buffer): void {
    this.files.push({ path, bytes });
  }

  result(): UploadedFile[] {
    if (this.files.length === 0) {
      throw new AppError(
        ErrorCode.INVALID_ARCHIVE,
        'The upload contains no files; send a zip, tar.gz or multipart form with SKILL.md at its root or in one ' +
          'top folder.',
      );
    }
    return this.files;
  }

  private register(path: string): void {
    if (this.filePaths.has(path))
      throw invalidEntry(path, `Entry '${shown(path)}' appears more than once; each file may appear only once.`);
    if (this.folderPaths.has(path)) throw fileAndFolder(path);
    const segments = path.split('/');
    for (let depth = 1; depth < segments.length; depth++) {
      const folder = segments.slice(0, depth).join('/');
      if (this.filePaths.has(folder)) throw fileAndFolder(folder);
      this.folderPaths.add(folder);
    }
    this.filePaths.add(path);
  }
}

// --- zip ---

async function readZip(source: Readable, collector: UploadCollector): Promise<void> {
  // yauzl reads the central directory at the end first, so the zip is held whole (under the body cap).
  const zip = await openZip(await bufferOf(source));
  try {
    for await (const entry of zip.eachEntry()) await readZipEntry(zip, entry, collector);
  } catch (error) {
    throw AppError.isInstance(error) ? error : zipListingError(error);
  } finally {
    zip.close();
  }
}

async function openZip(buffer: Buffer): Promise<yauzl.ZipFile> {
  try {
    return await yauzl.fromBufferPromise(buffer, {
      lazyEntries: true,
      validateEntrySizes: true,
      strictFileNames: true,
      decodeStrings: true,
    });
  } catch (error) {
    throw new AppError(ErrorCode.INVALID_ARCHIVE, `The body is not a valid zip archive: ${reasonOf(error)}.`);
  }
}

async function readZipEntry(zip: yauzl.ZipFile, entry: yauzl.Entry, collector: UploadCollector): Promise<void> {
  const name = entry.fileName;
  if (name.endsWith('/')) {
    checkedSegments(name); // folders come from the files' paths
    return;
  }
  const type = zipEntryType(entry);
  if (type !== 'file') throw specialEntry(name, type);
  if (entry.isEncrypted())
    throw invalidEntry(name, `Entry '${shown(name)}' is encrypted; upload an archive made without a password.`);
  const path = collector.admit(name, entry.uncompressedSize);
  let stream: Readable | undefined;
  try {
    stream = await zip.openReadStreamPromise(entry);
    const checked = { crc32: 0 };
    const bytes = await collectEntry(stream, collector, checked);
    // yauzl checks sizes but not the checksum: a changed byte would otherwise be installed as content.
    if (checked.crc32 !== entry.crc32) throw checksumMismatch(name, entry.crc32, checked.crc32);
    collector.add(path, bytes);
  } catch (error) {
    stream?.destroy();
    throw AppError.isInstance(error)
      ? error
      : invalidEntry(name, `Entry '${shown(name)}' could not be read: ${reasonOf(error)}; the archive is corrupt.`);
  }
}

const ZIP_SPECIAL_TYPES: Readonly<Record<number, string>> = {
  0o120000: 'symlink',
  0o040000: 'directory',
  0o020000: 'character device',
  0o060000: 'block device',
  0o010000: 'FIFO',
  0o140000: 'socket',
};

/** 'file', or what the Unix mode in the external attributes says it is (0: no Unix mode, a file). */
function zipEntryType(entry: yauzl.Entry): string {
  const type = (entry.externalFileAttributes >>> 16) & 0o170000;
  if (type === 0 || type === 0o100000) return 'file';
  return ZIP_SPECIAL_TYPES[type] ?? `special file (mode 0o${type.toString(8)})`;
}

/** yauzl refuses unsafe names itself while listing; say so in the same words as for any other archive. */
function zipListingError(error: unknown): AppError {
  const unsafeName = /^(?:invalid characters in fileName|absolute path|invalid relative path): ([\s\S]*)$/.exec(
    reasonOf(error),
  );
  if (unsafeName !== null) {
    const name = unsafeName[1];
    return invalidEntry(
      name,
      `Entry '${shown(name)}' ${pathProblem(name) ?? `has an unsafe path (${reasonOf(error)}).`}`,
    );
  }
  return new AppError(ErrorCode.INVALID_ARCHIVE, `The body is not a valid zip archive: ${reasonOf(error)}.`);
}

// --- tar and tar.gz ---

async function readTar(
  source: Readable,
  gzipped: boolean,
  collector: UploadCollector,
  limits: UploadLimits,
): Promise<void> {
  const extract = tar.extract();
  extract.on('entry', (header, stream, next) => {
    // Destroying the extractor destroys the current entry with its error: that is reported once, by pipeline.
    stream.on('error', () => undefined);
    readTarEntry(header, stream, collector).then(
      () => next(),
      (error: unknown) => next(error),
    );
  });
  // Bounds what is inflated even when no entry is ever emitted (a gzip of zeros reads as empty tar blocks).
  const inflated = byteCap(maxArchiveBytes(limits), () => tooManyBytes(limits));
  try {
    await (gzipped ? pipeline(source, createGunzip(), inflated, extract) : pipeline(source, inflated, extract));
  } catch (error) {
    throw AppError.isInstance(error) ? error : tarError(error, gzipped);
  }
}

async function readTarEntry(header: tar.Headers, stream: Readable, collector: UploadCollector): Promise<void> {
  if (header.type === 'directory') {
    checkedSegments(header.name);
    stream.resume();
    return;
  }
  // tar-stream reports old-style regular files ('\0' and '0') as 'file' too.
  if (header.type !== 'file')
    throw specialEntry(header.name, TAR_TYPE_NAMES[header.type ?? ''] ?? 'entry of an unknown type');
  const path = collector.admit(header.name, header.size ?? 0);
  collector.add(path, await collectEntry(stream, collector));
}

const TAR_TYPE_NAMES: Readonly<Record<string, string>> = {
  link: 'hard link',
  symlink: 'symlink',
  'character-device': 'character device',
  'block-device': 'block device',
  fifo: 'FIFO',
  'contiguous-file': 'contiguous file',
};

function tarError(error: unknown, gzipped: boolean): AppError {
  const code = (error as { code?: unknown } | null)?.code;
  if (gzipped && typeof code === 'string' && code.startsWith('Z_')) {
    return new AppError(
      ErrorCode.INVALID_ARCHIVE,
      `The body is not a valid gzip stream: ${reasonOf(error)}; send a .tar.gz, or an uncompressed tar as ` +
        `application/x-tar.`,
    );
  }
  return new AppError(ErrorCode.INVALID_ARCHIVE, `The body is not a valid tar archive: ${reasonOf(error)}.`);
}

// --- multipart/form-data ---

async function readMultipart(
  source: Readable,
  contentType: string,
  collector: UploadCollector,
  limits: UploadLimits,
): Promise<void> {
  const form = createForm(contentType, limits);
  const delimiters = delimiterCounter(contentType);
  await new Promise<void>((resolve, reject) => {
    const open = new Set<Readable>();
    let settled = false;
    let formFinished = false;
    let seen = 0;
    const fail = (error: unknown): void => {
      if (settled) return;
      settled = true;
      source.unpipe(form);
      for (const file of open) file.destroy();
      reject(AppError.isInstance(error) ? error : multipartError(error));
    };
    const finishIfDone = (): void => {
      if (settled || !formFinished || open.size > 0) return;
      // busboy passes over a part it cannot read as a form field or file (no form-data
      // Content-Disposition, a CR in its filename): such a part is refused, not dropped.
      if (delimiters !== undefined && delimiters.parts > seen) return fail(skippedParts(delimiters.parts - seen));
      settled = true;
      resolve();
    };
    form.on('file', (_field, file, filename) => {
      seen++;
      file.on('error', fail);
      if (settled) return void file.resume();
      try {
        if (filename === undefined) throw noFilename();
        const path = collector.admit(filename, 0);
        // A form part is always a file: a name ending in a slash names a folder, which it cannot hold.
        if (/[\\/]$/.test(filename))
          throw new AppError(
            ErrorCode.INVALID_ARCHIVE,
            `Entry '${path}/' names a folder; a form part is one file, with its relative path as the filename.`,
            { entry: filename.slice(0, 200) },
          );
        open.add(file);
        file.on('limit', () => fail(tooManyBytes(limits, path)));
        collectEntry(file, collector).then((bytes) => {
          collector.add(path, bytes);
          open.delete(file);
          finishIfDone();
        }, fail);
      } catch (error) {
        file.resume();
        fail(error);
      }
    });
    form.on('field', (name) => {
      seen++;
      fail(onlyFiles(name));
    });
    form.on('fieldsLimit', () => fail(onlyFiles()));
    form.on('filesLimit', () => fail(tooManyFiles(limits)));
    form.on('partsLimit', () => fail(tooManyFiles(limits)));
    form.on('error', fail);
    form.on('finish', () => {
      formFinished = true;
      finishIfDone();
    });
    source.on('error', fail);
    if (delimiters === undefined) source.pipe(form);
    else {
      delimiters.counter.on('error', fail);
      source.pipe(delimiters.counter).pipe(form);
    }
  });
}

/**
 * Counts the body's part delimiters (`CRLF--boundary CRLF`, or `--boundary CRLF` at its start) as
 * the bytes pass to busboy: more parts than busboy reports means it skipped some. Undefined when the
 * content type names no boundary (busboy refuses that body itself).
 */
function delimiterCounter(contentType: string): { counter: Transform; parts: number } | undefined {
  const boundary = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  if (boundary === null) return undefined;
  const delimiter = Buffer.from(`\r\n--${boundary[1] ?? boundary[2]}\r\n`);
  const state = { counter: undefined as unknown as Transform, parts: 0 };
  // The body's first delimiter has no CRLF before it: one is supplied, as if the body began with it.
  let tail = Buffer.from('\r\n');
  state.counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const window = Buffer.concat([tail, chunk]);
      for (let at = window.indexOf(delimiter); at !== -1; at = window.indexOf(delimiter, at + 1)) state.parts++;
      tail = window.subarray(Math.max(0, window.length - (delimiter.length - 1)));
      done(null, chunk);
    },
  });
  return state;
}

function skippedParts(count: number): AppError {
  return new AppError(
    ErrorCode.INVALID_ARCHIVE,
    `${count} form part(s) could not be read as a file (no \`Content-Disposition: form-data\` with a filename, ` +
      `or a line break in the filename); send one part per file with its relative path as the filename.`,
  );
}

function createForm(contentType: string, limits: UploadLimits): ReturnType<typeof Busboy> {
  try {
    return Busboy({
      headers: { 'content-type': contentType },
      preservePath: true, // busboy otherwise keeps only the file name
      // One field is allowed only so that it is seen (and refused) rather than skipped in silence.
      limits: {
        fileSize: limits.maxBytes,
        files: limits.maxFiles,
        fields: 1,
        fieldSize: 1024,
        parts: limits.maxFiles + 10,
      },
    });
  } catch (error) {
    throw multipartError(error);
  }
}

function multipartError(error: unknown): AppError {
  return new AppError(
    ErrorCode.INVALID_ARCHIVE,
    `The body is not valid multipart/form-data: ${reasonOf(error)}; send one part per file with its relative ` +
      `path as the filename, e.g. filename="scripts/run.sh".`,
  );
}

function onlyFiles(field?: string): AppError {
  const what = field === undefined ? 'A form field' : `Form field '${shown(field)}'`;
  return new AppError(
    ErrorCode.INVALID_ARCHIVE,
    `${what} is not a file; a multipart upload may contain only files, each with its relative path as the filename.`,
    field === undefined ? undefined : { field: shown(field) },
  );
}

function noFilename(): AppError {
  return new AppError(
    ErrorCode.INVALID_ARCHIVE,
    'A multipart part has no filename; give each file its relative path as the filename, e.g. ' +
      'filename="scripts/run.sh".',
  );
}

// --- streams ---

/**
 * The request body as a stream of at most `limit` bytes. `body` itself is never destroyed: when
 * reading stops early its rest is read and dropped, since destroying an unfinished HTTP request
 * closes its socket and the error answer would be lost (the server's request timeout bounds it).
 */
function limitedBody(body: Readable, limit: number): Transform {
  const out = byteCap(limit, () => bodyTooLarge(limit));
  let ended = body.readableEnded;
  const onEnd = (): void => {
    ended = true;
  };
  const onError = (error: unknown): void => {
    out.destroy(uploadCut(error));
  };
  const onClose = (): void => {
    if (!ended) onError(undefined);
  };
  out.once('close', () => {
    body.off('end', onEnd).off('close', onClose).unpipe(out);
    if (ended || body.destroyed) return;
    body.resume();
    body.off('error', onError).on('error', () => undefined);
  });
  if (ended) out.end();
  else if (body.destroyed) process.nextTick(onError, body.errored ?? undefined);
  else body.on('end', onEnd).on('error', onError).on('close', onClose).pipe(out);
  return out;
}

/** Passes bytes through until more than `limit` have passed, then fails with `tooLarge()`. */
function byteCap(limit: number, tooLarge: () => AppError): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > limit) callback(tooLarge());
      else callback(null, chunk);
    },
  });
}

async function bufferOf(source: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of source) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * An entry's bytes, each chunk counted against the limit as it arrives (and, given `checksum`,
 * added to its CRC-32 as it passes); the caller disposes of the stream on failure.
 */
function collectEntry(stream: Readable, collector: UploadCollector, checksum?: { crc32: number }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let failed = false;
    const fail = (error: unknown): void => {
      failed = true;
      reject(error);
    };
    stream.on('data', (chunk: Buffer) => {
      if (failed) return;
      try {
        collector.take(chunk.length);
        if (checksum !== undefined) checksum.crc32 = crc32(chunk, checksum.crc32);
        chunks.push(chunk);
      } catch (error) {
        fail(error);
      }
    });
    stream.once('error', fail);
    stream.once('end', () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
  });
}

function maxArchiveBytes(limits: UploadLimits): number {
  return limits.maxBytes + FRAMING_BASE + limits.maxFiles * FRAMING_PER_FILE;
}

// --- errors ---

function invalidEntry(name: string, message: string): AppError {
  return new AppError(ErrorCode.INVALID_ARCHIVE, message, { entry: shown(name) });
}

function checksumMismatch(name: string, expected: number, actual: number): AppError {
  const hex = (value: number) => `0x${value.toString(16).padStart(8, '0')}`;
  return new AppError(
    ErrorCode.INVALID_ARCHIVE,
    `Entry '${shown(name)}' does not match its CRC-32 (the archive says ${hex(expected)}, its content is ` +
      `${hex(actual)}); the archive is corrupt: make it again and upload that.`,
    { entry: shown(name), problem: 'crc32' },
  );
}

function specialEntry(name: string, type: string): AppError {
  return new AppError(
    ErrorCode.INVALID_ARCHIVE,
    `Entry '${shown(name)}' is a ` +
      `${type}; only regular files are accepted (no symlinks, links, devices or FIFOs): put the file itself in ` +
      `the archive.`,
    { entry: shown(name), type },
  );
}

function fileAndFolder(path: string): AppError {
  return invalidEntry(path, `Entry '${shown(path)}' is both a file and a folder in the upload; rename one of them.`);
}

function tooManyFiles(limits: UploadLimits): AppError {
  return new AppError(
    ErrorCode.PAYLOAD_TOO_LARGE,
    `The upload has more than ${limits.maxFiles} files (the limit, maxFiles); remove files from the skill.`,
    { limit: 'maxFiles', maxFiles: limits.maxFiles },
  );
}

function tooManyBytes(limits: UploadLimits, entry?: string): AppError {
  return new AppError(
    ErrorCode.PAYLOAD_TOO_LARGE,
    `The upload unpacks to more than ${limits.maxBytes} bytes (the limit, maxBytes, on all files ` +
      `together)${entry === undefined ? '' : `, at entry '${shown(entry)}'`}; make the skill smaller.`,
    { limit: 'maxBytes', maxBytes: limits.maxBytes, ...(entry === undefined ? {} : { entry: shown(entry) }) },
  );
}

function bodyTooLarge(limit: number): AppError {
  return new AppError(
    ErrorCode.PAYLOAD_TOO_LARGE,
    `The request body is larger than ${limit} bytes (the limit, maxBodyBytes); make the skill smaller.`,
    {
      limit: 'maxBodyBytes',
      maxBodyBytes: limit,
    },
  );
}

function uploadCut(error: unknown): AppError {
  if (AppError.isInstance(error)) return error;
  const reason = error === undefined ? 'the connection closed' : reasonOf(error);
  return new AppError(ErrorCode.INVALID_ARCHIVE, `The upload was not received whole (${reason}); send it again.`);
}

function unsupportedUpload(contentType: string): AppError {
  return new AppError(
    ErrorCode.UNSUPPORTED_MEDIA_TYPE,
    `A skill upload of type '${shown(contentType)}' is not accepted: send a zip (application/zip), a tar.gz ` +
      `(application/gzip), a tar (application/x-tar) or multipart/form-data.`,
    { contentType: shown(contentType) },
  );
}

function noSkillRoot(files: readonly UploadedFile[], tops: readonly string[]): AppError {
  const skillFiles = files.map((file) => file.path).filter((path) => /(^|\/)skill\.md$/i.test(path));
  const found = tops.length === 0 ? 'no files besides macOS metadata' : `top-level ${listed(tops)}`;
  const deeper =
    skillFiles.length === 0 ? 'and no SKILL.md anywhere' : `and SKILL.md-like files at ${listed(skillFiles)}`;
  return new AppError(
    ErrorCode.INVALID_ARCHIVE,
    `The upload is not one skill: found ${found}, ` +
      `${deeper}. Put SKILL.md at the root of the upload, or everything in one folder that has SKILL.md.`,
    { topLevel: tops.slice(0, 20), skillFiles: skillFiles.slice(0, 20) },
  );
}

function listed(names: readonly string[]): string {
  const shownNames = names.slice(0, 10).map((name) => `'${shown(name)}'`);
  return names.length > 10 ? `${shownNames.join(', ')} and ${names.length - 10} more` : shownNames.join(', ');
}

/** A name as it can be shown in a message: control characters escaped, at most 200 characters. */
function shown(name: string): string {
  const cut = name.length > 200 ? `${name.slice(0, 200)}…` : name;
  return cut.replace(/[\p{Cc}\p{Cs}]/gu, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** An error's message; duck-typed, since errors from Node's own streams may come from another realm (as under Jest). */
function reasonOf(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(error);
}

// --- skill root ---

const APPLE_DOUBLE_MAGIC = Buffer.from([0x00, 0x05, 0x16, 0x07]);

function isMacOsMetadata(file: UploadedFile): boolean {
  const segments = file.path.split('/');
  const base = segments[segments.length - 1];
  return (
    segments[0] === '__MACOSX' ||
    base === '.DS_Store' ||
    (base.startsWith('._') && file.bytes.subarray(0, 4).equals(APPLE_DOUBLE_MAGIC))
  );
}

/** 'folder/' for a file in a folder, the name for a file at the root. */
function topLevelEntry(path: string): string {
  const slash = path.indexOf('/');
  return slash === -1 ? path : path.slice(0, slash + 1);
}
