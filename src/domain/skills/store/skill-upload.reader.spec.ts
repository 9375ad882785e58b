import { PassThrough, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32, createGzip, gzipSync } from 'node:zlib';
import { describe, expect, it } from '@jest/globals';
import tar from 'tar-stream';
import yazl from 'yazl';
import { AppError, ErrorCode } from '@skillhost/core';
import {
  normalizeEntryPath,
  readSkillUpload,
  skillRootOf,
  type UploadedFile,
  type UploadLimits,
  uploadKindOf,
} from './skill-upload.reader.js';

const LIMITS: UploadLimits = { maxBytes: 1024 * 1024, maxFiles: 100 };
const MiB = 1024 * 1024;
const BOUNDARY = '----skillhost-test-boundary-7MA4YWxkTrZu0gW';
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

// --- building real archives ---

interface FileSpec {
  name: string;
  data?: string | Buffer;
}

async function bufferOf(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A zip made by yazl; `build` adds entries with any of its options (symlink modes, streams). */
async function zipOf(files: FileSpec[], build?: (zip: yazl.ZipFile) => void): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const file of files) zip.addBuffer(Buffer.from(file.data ?? `content of ${file.name}`), file.name);
  build?.(zip);
  zip.end();
  return bufferOf(zip.outputStream);
}

interface CraftedZipEntry {
  name: string;
  data?: Buffer;
  /** Unix mode, put in the upper 16 bits of the external attributes as Info-ZIP does. */
  mode?: number;
  encrypted?: boolean;
}

/**
 * A zip written byte by byte (stored entries), for names and flags that yazl rightly refuses to
 * write. Its layout is the one APPNOTE.TXT gives; a test below checks that safe names come through.
 */
function craftedZip(entries: CraftedZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const data = entry.data ?? Buffer.from(`content of ${entry.name}`);
    // Traditional encryption puts a 12-byte header before the data: the stored size is 12 more.
    const uncompressedSize = entry.encrypted ? data.length - 12 : data.length;
    const flags = 0x0800 | (entry.encrypted ? 0x0001 : 0);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(flags, 6);
    local.writeUInt32LE(crc32(data), 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(uncompressedSize, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(flags, 8);
    central.writeUInt32LE(crc32(data), 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(uncompressedSize, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(((entry.mode ?? 0o100644) << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A number as the 4 little-endian bytes a zip header holds it in. */
function u32(value: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value >>> 0);
  return bytes;
}

/** Rewrites the uncompressed size the central directory declares for the first entry (a lying header). */
function withDeclaredSize(zip: Buffer, size: number): Buffer {
  const patched = Buffer.from(zip);
  const directoryOffset = patched.readUInt32LE(patched.length - 22 + 16);
  expect(patched.readUInt32LE(directoryOffset)).toBe(0x02014b50);
  patched.writeUInt32LE(size, directoryOffset + 24);
  return patched;
}

type TarEntry = tar.Headers & { data?: string | Buffer };

async function tarOf(entries: TarEntry[]): Promise<Buffer> {
  const pack = tar.pack();
  const packed = bufferOf(pack);
  for (const { data, ...header } of entries) {
    const bytes = Buffer.from(
      data ?? (header.type === undefined || header.type === 'file' ? `content of ${header.name}` : ''),
    );
    await new Promise<void>((resolve, reject) =>
      pack.entry({ ...header, size: bytes.length }, bytes, (error) => (error ? reject(error) : resolve())),
    );
  }
  pack.finalize();
  return packed;
}

async function tarGzOf(entries: TarEntry[]): Promise<Buffer> {
  return gzipSync(await tarOf(entries));
}

interface Part {
  filename?: string;
  field?: string;
  data: string | Buffer;
  contentType?: string;
}

function multipartOf(parts: Part[], { closed = true } = {}): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const filename = part.filename === undefined ? '' : `; filename="${part.filename}"`;
    const type = part.contentType === undefined ? '' : `Content-Type: ${part.contentType}\r\n`;
    chunks.push(
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.field ?? 'file'}"${filename}\r\n${type}\r\n`,
      ),
    );
    chunks.push(Buffer.from(part.data), Buffer.from('\r\n'));
  }
  if (closed) chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

/** The body as a stream of small chunks, so every parser sees boundaries and headers split. */
function streamOf(body: Buffer, chunkSize = 1000): Readable {
  const chunks: Buffer[] = [];
  for (let start = 0; start < body.length; start += chunkSize) chunks.push(body.subarray(start, start + chunkSize));
  return Readable.from(chunks);
}

/** 200 MB of zeros, produced lazily: it never exists in memory whole. */
function zeros(total = 200 * MiB): Readable {
  const chunk = Buffer.alloc(MiB);
  return Readable.from(
    (function* () {
      for (let sent = 0; sent < total; sent += MiB) yield chunk;
    })(),
  );
}

// --- reading ---

function read(body: Buffer | Readable, contentType: string, limits: UploadLimits = LIMITS): Promise<UploadedFile[]> {
  return readSkillUpload(Buffer.isBuffer(body) ? streamOf(body) : body, contentType, limits);
}

function asText(files: UploadedFile[]): Record<string, string> {
  return Object.fromEntries(files.map((file) => [file.path, file.bytes.toString('utf8')]));
}

async function refusalOf(upload: Promise<unknown>): Promise<AppError> {
  const outcome = await upload.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome))
    throw new Error(
      `expected a refusal, got ${JSON.stringify((outcome.value as UploadedFile[]).map((file) => file.path))}`,
    );
  expect(outcome.error).toBeInstanceOf(AppError);
  return outcome.error as AppError;
}

const FORMATS = ['zip', 'tar.gz', 'tar', 'multipart'] as const;
type Format = (typeof FORMATS)[number];

/** The same files in each format, for rules that hold whatever the container. */
async function uploadOf(format: Format, files: FileSpec[]): Promise<{ body: Buffer; contentType: string }> {
  switch (format) {
    case 'zip':
      return {
        body: craftedZip(
          files.map((file) => ({ name: file.name, data: Buffer.from(file.data ?? `content of ${file.name}`) })),
        ),
        contentType: 'application/zip',
      };
    case 'tar.gz':
      return { body: await tarGzOf(files), contentType: 'application/gzip' };
    case 'tar':
      return { body: await tarOf(files), contentType: 'application/x-tar' };
    case 'multipart':
      return {
        body: multipartOf(files.map((file) => ({ filename: file.name, data: file.data ?? `content of ${file.name}` }))),
        contentType: MULTIPART,
      };
  }
}

describe(readSkillUpload.name, () => {
  describe('accepted uploads', () => {
    const expected = {
      'my-skill/SKILL.md': '---\nname: my-skill\n---\nBody',
      'my-skill/scripts/run.sh': '#!/bin/sh\necho hi\n',
      'my-skill/references/a b/ü.md': 'unicode',
      'my-skill/empty.txt': '',
    };

    it('reads a zip (deflated, with folder entries) into exactly its files', async () => {
      const body = await zipOf(
        Object.entries(expected).map(([name, data]) => ({ name, data })),
        (zip) => {
          zip.addEmptyDirectory('my-skill/');
          zip.addEmptyDirectory('my-skill/scripts');
        },
      );

      expect(asText(await read(body, 'application/zip'))).toEqual(expected);
    });

    it('reads a tar.gz with folder entries, ./ prefixes and a pax long name', async () => {
      const longName = `my-skill/${'deep/'.repeat(14)}${'n'.repeat(120)}.md`; // 16 levels, over 100 bytes
      const body = await tarGzOf([
        { name: './', type: 'directory' },
        { name: './my-skill/', type: 'directory' },
        ...Object.entries(expected).map(([name, data]) => ({ name: `./${name}`, data })),
        { name: longName, data: 'long' },
      ]);

      expect(asText(await read(body, 'application/gzip'))).toEqual({ ...expected, [longName]: 'long' });
    });

    it.each(['application/x-gzip', 'application/x-compressed-tar'])(
      'reads a tar.gz sent as %s',
      async (contentType) => {
        const body = await tarGzOf([{ name: 'SKILL.md', data: 'x' }]);

        expect(asText(await read(body, contentType))).toEqual({ 'SKILL.md': 'x' });
      },
    );

    it('reads an uncompressed tar, including old-style regular files (typeflag NUL)', async () => {
      const body = await tarOf(Object.entries(expected).map(([name, data]) => ({ name, data })));
      // tar-stream writes '0'; the oldest tars write a NUL typeflag. Re-checksum after the change.
      const header = body.subarray(0, 512);
      header[156] = 0;
      header.fill(0x20, 148, 156);
      header.write(
        `${(header.reduce((sum, byte) => sum + byte, 0) & 0o777777).toString(8).padStart(6, '0')}\0 `,
        148,
        'ascii',
      );

      expect(asText(await read(body, 'application/x-tar'))).toEqual(expected);
    });

    it('reads a multipart form whose filenames are the relative paths (busboy must keep the folders)', async () => {
      const body = multipartOf(
        Object.entries(expected).map(([filename, data]) => ({
          filename,
          data,
          contentType: 'application/octet-stream',
        })),
      );

      // 7-byte chunks split every boundary and header.
      expect(asText(await readSkillUpload(streamOf(body, 7), MULTIPART, LIMITS))).toEqual(expected);
    });

    it('reads binary content byte for byte', async () => {
      const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, index) => (index * 31) % 256));
      const zip = await zipOf([{ name: 'SKILL.md', data: bytes }]);
      const form = multipartOf([{ filename: 'SKILL.md', data: bytes }]);

      expect((await read(zip, 'application/zip'))[0].bytes.equals(bytes)).toBe(true);
      expect((await read(form, MULTIPART))[0].bytes.equals(bytes)).toBe(true);
    });

    it('accepts names that differ only in case (they are different files on the server)', async () => {
      const files = await read(await tarGzOf([{ name: 'README.md' }, { name: 'readme.md' }]), 'application/gzip');

      expect(files.map((file) => file.path).sort()).toEqual(['README.md', 'readme.md']);
    });

    it('takes a hand-made zip with safe names, so the refusals below come from the names alone', async () => {
      const body = craftedZip([{ name: 'SKILL.md' }, { name: './scripts//run.sh', mode: 0 }]);

      expect(asText(await read(body, 'application/zip'))).toEqual({
        'SKILL.md': 'content of SKILL.md',
        'scripts/run.sh': 'content of ./scripts//run.sh',
      });
    });
  });

  describe('unsafe paths', () => {
    const deep = `${Array.from({ length: 17 }, (_, index) => `d${index}`).join('/')}`;
    // A tar name ends at its first NUL, and a name ending in '/' is a folder in a tar or zip.
    const unsafe: [string, string, RegExp, readonly Format[]][] = [
      ['an absolute path', '/etc/passwd', /absolute path/, FORMATS],
      ['a Windows drive path', 'C:\\x', /absolute path/, FORMATS],
      ['a drive path with slashes', 'c:/windows/win.ini', /absolute path/, FORMATS],
      ['a UNC path', '\\\\server\\share\\x', /absolute path/, FORMATS],
      ['a backslash separator', 'scripts\\run.sh', /'\\' in its path/, FORMATS],
      ['a leading ..', '../x', /'\.\.' segment/, FORMATS],
      ['a .. in the middle', 'a/../b', /'\.\.' segment/, FORMATS],
      ['a NUL byte', 'a\0b', /control character/, ['zip', 'multipart']],
      // busboy drops a part whose filename has a raw line break before it reaches the reader.
      ['a newline', 'a\nb', /control character/, ['zip', 'tar.gz', 'tar']],
      ['a bell', 'a\u0007b', /control character/, FORMATS],
      ['a path over 1,024 bytes', `${'é'.repeat(513)}`, /1026 bytes long/, FORMATS],
      ['a path 17 levels deep', deep, /17 levels deep/, FORMATS],
      ['a name that is only ./', './', /names no file/, ['multipart']],
    ];

    it.each(
      unsafe.flatMap(([what, name, message, formats]) =>
        formats.map((format) => [format, what, name, message] as const),
      ),
    )('%s: refuses %s', async (format, _what, name, message) => {
      const { body, contentType } = await uploadOf(format, [{ name: 'SKILL.md' }, { name }]);

      const error = await refusalOf(read(body, contentType));

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      expect(error.message).toMatch(message);
      expect(error.message).toContain('Entry ');
      expect(error.details?.entry).toBeDefined();
    });

    it('refuses an empty name in a zip, a tar and a multipart form', async () => {
      for (const format of ['zip', 'tar', 'multipart'] as const) {
        const { body, contentType } = await uploadOf(format, [{ name: 'SKILL.md' }, { name: '' }]);

        const error = await refusalOf(read(body, contentType));

        expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
        expect(error.message).toMatch(/empty name/);
      }
    });

    it("turns yauzl's own refusal of a zip-slip name into a message naming the entry", async () => {
      const error = await refusalOf(read(craftedZip([{ name: 'x/../../evil.sh' }]), 'application/zip'));

      expect(error.message).toBe(
        "Entry 'x/../../evil.sh' has a '..' segment; archive paths must stay inside the skill folder.",
      );
      expect(error.details).toEqual({ entry: 'x/../../evil.sh' });
    });

    it('shows control characters escaped in the message', async () => {
      const error = await refusalOf(read(craftedZip([{ name: 'a\u0007b' }]), 'application/zip'));

      expect(error.message).toContain("Entry 'a\\u0007b'");
    });

    it('refuses a zip folder entry with a .. segment even though folders are skipped', async () => {
      const error = await refusalOf(
        read(craftedZip([{ name: 'SKILL.md' }, { name: 'a/../', data: Buffer.alloc(0) }]), 'application/zip'),
      );

      expect(error.message).toMatch(/'\.\.' segment/);
    });

    it('refuses a tar folder entry with a .. segment', async () => {
      const error = await refusalOf(
        read(await tarGzOf([{ name: '../up', type: 'directory' }, { name: 'SKILL.md' }]), 'application/gzip'),
      );

      expect(error.message).toMatch(/'\.\.' segment/);
    });
  });

  describe('special entries', () => {
    it.each([
      ['symlink', 0o120777],
      ['FIFO', 0o010644],
      ['character device', 0o020644],
      ['block device', 0o060644],
      ['socket', 0o140755],
      ['directory', 0o040755],
    ])('refuses a zip entry whose Unix mode says %s', async (type, mode) => {
      const body = await zipOf([{ name: 'SKILL.md' }], (zip) =>
        zip.addBuffer(Buffer.from('/etc/passwd'), 'link', { mode }),
      );

      const error = await refusalOf(read(body, 'application/zip'));

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      expect(error.message).toBe(
        `Entry 'link' is a ${type}; only regular files are accepted (no symlinks, links, devices or FIFOs): put ` +
          `the file itself in the archive.`,
      );
      expect(error.details).toEqual({ entry: 'link', type });
    });

    it('refuses an encrypted zip entry', async () => {
      const error = await refusalOf(
        read(craftedZip([{ name: 'SKILL.md', data: Buffer.alloc(40, 7), encrypted: true }]), 'application/zip'),
      );

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      expect(error.message).toMatch(/^Entry 'SKILL.md' is encrypted/);
    });

    it.each([
      ['symlink', { type: 'symlink', linkname: '/etc/passwd' }],
      ['hard link', { type: 'link', linkname: 'SKILL.md' }],
      ['character device', { type: 'character-device', devmajor: 1, devminor: 3 }],
      ['block device', { type: 'block-device', devmajor: 8, devminor: 0 }],
      ['FIFO', { type: 'fifo' }],
      ['contiguous file', { type: 'contiguous-file' }],
    ] as const)('refuses a tar %s', async (type, header) => {
      const body = await tarGzOf([{ name: 'SKILL.md' }, { name: 'special', ...header }]);

      const error = await refusalOf(read(body, 'application/gzip'));

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      expect(error.message).toMatch(new RegExp(`^Entry 'special' is a ${type}; only regular files`));
      expect(error.details).toEqual({ entry: 'special', type });
    });
  });

  describe('duplicates', () => {
    it.each(FORMATS)('%s: refuses the same path twice, also when spelled differently', async (format) => {
      for (const [first, second] of [
        ['SKILL.md', 'SKILL.md'],
        ['a/b.md', './a//b.md'],
      ]) {
        const { body, contentType } = await uploadOf(format, [{ name: first }, { name: second }]);

        const error = await refusalOf(read(body, contentType));

        expect(error.message).toMatch(/appears more than once/);
      }
    });

    it.each(FORMATS)('%s: refuses a path that is both a file and a folder, in either order', async (format) => {
      for (const names of [
        ['a', 'a/b'],
        ['a/b/c', 'a/b'],
      ]) {
        const { body, contentType } = await uploadOf(
          format,
          names.map((name) => ({ name })),
        );

        const error = await refusalOf(read(body, contentType));

        expect(error.message).toMatch(/is both a file and a folder/);
      }
    });
  });

  describe('limits', () => {
    const manyFiles = Array.from({ length: 2000 }, (_, index) => ({ name: `f/${index}.txt`, data: 'x' }));
    const fileLimit: UploadLimits = { maxBytes: 10 * MiB, maxFiles: 1000 };

    it.each(FORMATS)('%s: refuses 2,000 files when 1,000 are allowed', async (format) => {
      const { body, contentType } = await uploadOf(format, manyFiles);

      const error = await refusalOf(read(body, contentType, fileLimit));

      expect(error.code).toBe(ErrorCode.PAYLOAD_TOO_LARGE);
      expect(error.message).toMatch(/more than 1000 files \(the limit, maxFiles\)/);
      expect(error.details).toEqual({ limit: 'maxFiles', maxFiles: 1000 });
    });

    it.each(FORMATS)('%s: accepts exactly maxFiles files and maxBytes bytes', async (format) => {
      const files = Array.from({ length: 4 }, (_, index) => ({ name: `f${index}`, data: Buffer.alloc(256, 97) }));
      const { body, contentType } = await uploadOf(format, files);

      expect(await read(body, contentType, { maxBytes: 1024, maxFiles: 4 })).toHaveLength(4);
    });

    it.each(FORMATS)('%s: refuses files that together are one byte over maxBytes', async (format) => {
      const files = [
        { name: 'a', data: Buffer.alloc(512, 97) },
        { name: 'b', data: Buffer.alloc(513, 98) },
      ];
      const { body, contentType } = await uploadOf(format, files);

      const error = await refusalOf(read(body, contentType, { maxBytes: 1024, maxFiles: 10 }));

      expect(error.code).toBe(ErrorCode.PAYLOAD_TOO_LARGE);
      expect(error.message).toMatch(/more than 1024 bytes \(the limit, maxBytes/);
      expect(error.details).toMatchObject({ limit: 'maxBytes', maxBytes: 1024 });
    });

    it('refuses a multipart file over maxBytes on its own (busboy truncates it)', async () => {
      const error = await refusalOf(
        read(multipartOf([{ filename: 'big', data: Buffer.alloc(2048) }]), MULTIPART, { maxBytes: 1024, maxFiles: 10 }),
      );

      expect(error.code).toBe(ErrorCode.PAYLOAD_TOO_LARGE);
      expect(error.details).toMatchObject({ limit: 'maxBytes' });
    });

    it('refuses a request body over the cap before parsing it', async () => {
      const cap = LIMITS.maxBytes + MiB + LIMITS.maxFiles * 3 * 1024;
      const error = await refusalOf(read(Buffer.alloc(cap + 1), 'application/zip'));

      expect(error.code).toBe(ErrorCode.PAYLOAD_TOO_LARGE);
      expect(error.details).toEqual({ limit: 'maxBodyBytes', maxBodyBytes: cap });
    });

    describe('bombs cost nothing', () => {
      async function refusedCheaply(body: Buffer, contentType: string): Promise<AppError> {
        const before = process.memoryUsage().rss;
        const error = await refusalOf(read(body, contentType));
        expect(process.memoryUsage().rss - before).toBeLessThan(100 * MiB);
        return error;
      }

      it(
        'refuses a gzip of 200 MB of zeros (no tar entry ever appears) after inflating only up to ' + 'the cap',
        async () => {
          const body = await bufferOf(zeros().pipe(createGzip()));
          expect(body.length).toBeLessThan(MiB);

          const error = await refusedCheaply(body, 'application/gzip');

          expect(error.code).toBe(ErrorCode.PAYLOAD_TOO_LARGE);
          expect(error.details).toMatchObject({ limit: 'maxBytes', maxBytes: LIMITS.maxBytes });
        },
      );

      it('refuses a tar.gz entry of 200 MB of zeros by its declared size', async () => {
        const pack = tar.pack();
        const gzipped = bufferOf(pack.pipe(createGzip()));
        await pipeline(zeros(), pack.entry({ name: 'big.bin', size: 200 * MiB }));
        pack.finalize();
        const body = await gzipped;

        const error = await refusedCheaply(body, 'application/gzip');

        expect(error.code).toBe(ErrorCode.PAYLOAD_TOO_LARGE);
        expect(error.details).toEqual({ limit: 'maxBytes', maxBytes: LIMITS.maxBytes, entry: 'big.bin' });
      });

      it('refuses a zip entry of 200 MB of zeros deflated, by its declared size', async () => {
        const body = await zipOf([], (zip) => zip.addReadStream(zeros(), 'big.bin', { compressionLevel: 1 }));
        expect(body.length).toBeLessThan(2 * MiB);

        const error = await refusedCheaply(body, 'application/zip');

        expect(error.code).toBe(ErrorCode.PAYLOAD_TOO_LARGE);
        expect(error.details).toEqual({ limit: 'maxBytes', maxBytes: LIMITS.maxBytes, entry: 'big.bin' });
      });

      it('refuses the same zip entry when its header claims 1,000 bytes: the real inflated bytes count', async () => {
        const body = withDeclaredSize(
          await zipOf([], (zip) => zip.addReadStream(zeros(), 'big.bin', { compressionLevel: 1 })),
          1000,
        );

        const error = await refusedCheaply(body, 'application/zip');

        expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
        expect(error.message).toMatch(/^Entry 'big.bin' could not be read: too many bytes in the stream/);
      });

      it('refuses the entry whose declared size takes the running total over, before inflating it', async () => {
        // Each entry declares its true size and passes on its own; together they go over.
        const files = Array.from({ length: 5 }, (_, index) => ({ name: `f${index}`, data: Buffer.alloc(300 * 1024) }));

        const error = await refusalOf(read(await zipOf(files), 'application/zip'));

        expect(error.code).toBe(ErrorCode.PAYLOAD_TOO_LARGE);
        expect(error.details).toEqual({ limit: 'maxBytes', maxBytes: LIMITS.maxBytes, entry: 'f3' });
      });
    });
  });

  describe('corrupt and empty bodies', () => {
    it.each([
      [
        'not a zip at all',
        Buffer.from('hello, I am text'),
        /^The body is not a valid zip archive: End of central directory record signature not found/,
      ],
      ['an empty body', Buffer.alloc(0), /^The body is not a valid zip archive/],
    ])('refuses a zip body that is %s', async (_what, body, message) => {
      const error = await refusalOf(read(body, 'application/zip'));

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      expect(error.message).toMatch(message);
    });

    it('refuses a zip whose entries point past the end of the data', async () => {
      const zip = await zipOf([{ name: 'SKILL.md', data: 'x'.repeat(5000) }]);
      const directoryOffset = zip.readUInt32LE(zip.length - 22 + 16);
      const patched = Buffer.from(zip);
      patched.writeUInt32LE(0x7fffffff, directoryOffset + 20); // compressed size beyond the data

      const error = await refusalOf(read(patched, 'application/zip'));

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      expect(error.message).toMatch(/^Entry 'SKILL.md' could not be read/);
    });

    it('refuses a zip whose deflated data is garbage', async () => {
      const zip = await zipOf([{ name: 'SKILL.md', data: 'some text that deflates '.repeat(100) }]);
      const patched = Buffer.from(zip);
      patched.fill(0xff, 30 + 'SKILL.md'.length, 30 + 'SKILL.md'.length + 20);

      const error = await refusalOf(read(patched, 'application/zip'));

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      expect(error.message).toMatch(/^Entry 'SKILL.md' could not be read: .+; the archive is corrupt\.$/);
    });

    it.each([
      ['stored', { compress: false }],
      ['deflated', { compress: true }],
    ])('refuses a %s zip entry whose content does not match its CRC-32, naming the entry', async (_kind, options) => {
      const content = Buffer.from('---\nname: good\ndescription: A skill.\n---\nBody '.repeat(20));
      const zip = await zipOf([{ name: 'good/SKILL.md' }], (z) =>
        z.addBuffer(content, 'good/references/guide.md', options),
      );
      const declared = crc32(content);
      // The headers keep the original CRC-32 while the content changes by one bit: the local header's and the central
      // directory's.
      const patched = Buffer.from(zip);
      for (let at = patched.indexOf(u32(declared)); at !== -1; at = patched.indexOf(u32(declared), at + 4))
        patched.writeUInt32LE((declared ^ 0x80) >>> 0, at);
      const changed = (declared ^ 0x80) >>> 0;

      const error = await refusalOf(read(patched, 'application/zip'));

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      expect(error.message).toBe(
        `Entry 'good/references/guide.md' does not match its CRC-32 (the archive says 0x${changed
          .toString(16)
          .padStart(8, '0')},` +
          ` its content is 0x${declared
            .toString(16)
            .padStart(8, '0')}); the archive is corrupt: make it again and upload that.`,
      );
      expect(error.details).toEqual({ entry: 'good/references/guide.md', problem: 'crc32' });
    });

    it('refuses a tar.gz body that is not gzip', async () => {
      const error = await refusalOf(read(await tarOf([{ name: 'SKILL.md' }]), 'application/gzip'));

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      expect(error.message).toMatch(/^The body is not a valid gzip stream: incorrect header check; send a \.tar\.gz/);
    });

    it('refuses a truncated tar.gz', async () => {
      const body = await tarGzOf([
        { name: 'SKILL.md', data: Buffer.from(Array.from({ length: 5000 }, (_, index) => index % 251)) },
      ]);

      const error = await refusalOf(read(body.subarray(0, body.length - 100), 'application/gzip'));

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      expect(error.message).toMatch(/^The body is not a valid gzip stream: unexpected end of file/);
    });

    it('refuses a gzip of something that is not a tar', async () => {
      const error = await refusalOf(read(gzipSync(Buffer.from('x'.repeat(2048))), 'application/gzip'));

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      expect(error.message).toMatch(/^The body is not a valid tar archive: Invalid tar header/);
    });

    it('refuses a tar cut in the middle of a file', async () => {
      const body = await tarOf([{ name: 'SKILL.md', data: 'x'.repeat(5000) }]);

      const error = await refusalOf(read(body.subarray(0, 2048), 'application/x-tar'));

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      expect(error.message).toBe('The body is not a valid tar archive: Unexpected end of data.');
    });

    it('refuses multipart without a boundary', async () => {
      const error = await refusalOf(read(multipartOf([{ filename: 'SKILL.md', data: 'x' }]), 'multipart/form-data'));

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      expect(error.message).toMatch(/^The body is not valid multipart\/form-data: Multipart: Boundary not found/);
    });

    it('refuses multipart that ends before its closing boundary', async () => {
      const body = multipartOf([{ filename: 'SKILL.md', data: 'x' }], { closed: false });

      const error = await refusalOf(read(body.subarray(0, body.length - 4), MULTIPART));

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      expect(error.message).toMatch(/^The body is not valid multipart\/form-data: Unexpected end of multipart data/);
    });

    it('refuses a multipart body without a single boundary line', async () => {
      const error = await refusalOf(read(Buffer.from('just some text'), MULTIPART));

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      expect(error.message).toMatch(/^The body is not valid multipart\/form-data: Unexpected end of multipart data/);
    });

    it('refuses a multipart field that is not a file', async () => {
      const error = await refusalOf(
        read(
          multipartOf([
            { filename: 'SKILL.md', data: 'x' },
            { field: 'name', data: 'my-skill' },
          ]),
          MULTIPART,
        ),
      );

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      expect(error.message).toBe(
        "Form field 'name' is not a file; a multipart upload may contain only files, each with its relative " +
          'path as the filename.',
      );
    });

    it('refuses a multipart file part without a filename', async () => {
      const error = await refusalOf(
        read(multipartOf([{ data: 'x', contentType: 'application/octet-stream' }]), MULTIPART),
      );

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      expect(error.message).toMatch(/^A multipart part has no filename/);
    });

    it.each([
      ['an empty zip', async () => zipOf([]), 'application/zip'],
      ['a zip of folders only', async () => zipOf([], (zip) => zip.addEmptyDirectory('a')), 'application/zip'],
      ['a tar.gz of folders only', async () => tarGzOf([{ name: 'a/', type: 'directory' }]), 'application/gzip'],
      ['an empty tar', async () => Buffer.alloc(1024), 'application/x-tar'],
      ['a multipart form without parts', async () => multipartOf([]), MULTIPART],
    ])('refuses %s: no files', async (_what, build, contentType) => {
      const error = await refusalOf(read(await build(), contentType));

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      // busboy may see a form with no part as empty or as cut short, depending on how the bytes arrive: both refuse it.
      expect(error.message).toMatch(
        contentType === MULTIPART
          ? /^(The upload contains no files|The body is not valid multipart\/form-data)/
          : /^The upload contains no files/,
      );
    });

    it('refuses a content type that is no upload kind with 415', async () => {
      const error = await refusalOf(read(Buffer.from('{}'), 'application/json'));

      expect(error.code).toBe(ErrorCode.UNSUPPORTED_MEDIA_TYPE);
      expect(error.message).toMatch(/^A skill upload of type 'application\/json' is not accepted: send a zip/);
    });
  });

  describe('broken streams', () => {
    /** The first `cut` bytes of `body`, then the stream fails as an aborted request does. */
    function abortedAfter(body: Buffer, cut: number): Readable {
      const stream = new PassThrough();
      stream.write(body.subarray(0, cut));
      setTimeout(() => stream.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })), 10);
      return stream;
    }

    it.each(FORMATS)('%s: rejects cleanly when the client aborts mid-upload', async (format) => {
      const { body, contentType } = await uploadOf(format, [{ name: 'SKILL.md', data: 'x'.repeat(20_000) }]);

      const error = await refusalOf(read(abortedAfter(body, body.length >> 1), contentType));

      expect(error.code).toBe(ErrorCode.INVALID_ARCHIVE);
      expect(error.message).toBe('The upload was not received whole (aborted); send it again.');
    });

    it.each(FORMATS)('%s: rejects when the stream closes without ending', async (format) => {
      const { body, contentType } = await uploadOf(format, [{ name: 'SKILL.md', data: 'x'.repeat(20_000) }]);
      const stream = new PassThrough();
      stream.write(body.subarray(0, body.length >> 1));
      setTimeout(() => stream.destroy(), 10);

      const error = await refusalOf(read(stream, contentType));

      expect(error.message).toBe('The upload was not received whole (the connection closed); send it again.');
    });

    it('rejects a stream that was destroyed before reading began', async () => {
      const stream = new PassThrough();
      stream.destroy();

      const error = await refusalOf(read(stream, 'application/zip'));

      expect(error.message).toMatch(/^The upload was not received whole/);
    });

    it('drains the rest of the body after a refusal instead of destroying it', async () => {
      // 2 MB, refused at its first entry: most of it is still unread then.
      const { body, contentType } = await uploadOf('tar', [
        { name: '../evil' },
        ...Array.from({ length: 200 }, (_, index) => ({ name: `f${index}`, data: 'x'.repeat(10_000) })),
      ]);
      const stream = streamOf(body, 512);
      let ended = false;
      stream.on('end', () => (ended = true));

      await refusalOf(read(stream, contentType, { maxBytes: 10 * MiB, maxFiles: 1000 }));
      await new Promise((resolve) => setTimeout(resolve, 50));

      expect(ended).toBe(true);
    });
  });
});

describe(normalizeEntryPath.name, () => {
  it.each([
    ['SKILL.md', 'SKILL.md'],
    ['./a/b', 'a/b'],
    ['a//b/./c', 'a/b/c'],
    ['...md', '...md'],
    ['a/..b', 'a/..b'],
    [`${'a/'.repeat(15)}b`, `${'a/'.repeat(15)}b`],
  ])('normalises %j to %j', (name, path) => {
    expect(normalizeEntryPath(name)).toBe(path);
  });

  it('refuses an unpaired surrogate (no UTF-8 decoder makes one, but a caller might)', () => {
    expect(() => normalizeEntryPath('a\ud800b')).toThrow(/control character/);
  });
});

describe(uploadKindOf.name, () => {
  it.each([
    ['application/zip', 'zip'],
    ['Application/ZIP; foo=bar', 'zip'],
    ['application/x-zip-compressed', 'zip'],
    ['application/gzip', 'tar.gz'],
    ['application/x-gzip', 'tar.gz'],
    ['application/x-compressed-tar', 'tar.gz'],
    ['application/x-tar', 'tar'],
    [MULTIPART, 'multipart'],
    ['application/json', undefined],
    ['application/octet-stream', undefined],
    ['text/plain', undefined],
    ['constructor', undefined],
    [undefined, undefined],
  ])('%s → %s', (contentType, kind) => {
    expect(uploadKindOf(contentType)).toBe(kind);
  });
});

describe(skillRootOf.name, () => {
  const file = (path: string, bytes = Buffer.from(path)): UploadedFile => ({ path, bytes });
  const paths = (files: UploadedFile[]): string[] => files.map((entry) => entry.path).sort();

  it('keeps an upload with SKILL.md at the root as it is', () => {
    const root = skillRootOf([file('SKILL.md'), file('scripts/run.sh')]);

    expect(root.folder).toBeUndefined();
    expect(paths(root.files)).toEqual(['SKILL.md', 'scripts/run.sh']);
  });

  it('re-roots an upload whose files are all in one folder with SKILL.md, and names the folder', () => {
    const root = skillRootOf([file('my-skill/SKILL.md'), file('my-skill/scripts/run.sh')]);

    expect(root.folder).toBe('my-skill');
    expect(paths(root.files)).toEqual(['SKILL.md', 'scripts/run.sh']);
    expect(root.files.find((entry) => entry.path === 'SKILL.md')?.bytes.toString()).toBe('my-skill/SKILL.md');
  });

  it('handles ./ prefixes through the reader', async () => {
    const files = await read(
      await tarGzOf([{ name: './', type: 'directory' }, { name: './my-skill/SKILL.md' }, { name: './my-skill/a.md' }]),
      'application/gzip',
    );

    expect(skillRootOf(files)).toMatchObject({ folder: 'my-skill' });
    expect(paths(skillRootOf(files).files)).toEqual(['SKILL.md', 'a.md']);
  });

  it('drops macOS metadata before looking for the root', () => {
    const appleDouble = Buffer.concat([Buffer.from([0x00, 0x05, 0x16, 0x07]), Buffer.alloc(60)]);
    const root = skillRootOf([
      file('__MACOSX/my-skill/._SKILL.md'),
      file('._my-skill', appleDouble),
      file('my-skill/.DS_Store'),
      file('my-skill/SKILL.md'),
      file('my-skill/._notes.md', appleDouble),
      file('my-skill/._keep.md', Buffer.from('a real file whose name starts with ._')),
    ]);

    expect(root.folder).toBe('my-skill');
    expect(paths(root.files)).toEqual(['._keep.md', 'SKILL.md']);
  });

  it('refuses two top folders, naming them', () => {
    expect(() => skillRootOf([file('a/SKILL.md'), file('b/SKILL.md')])).toThrow(
      "The upload is not one skill: found top-level 'a/', 'b/', and SKILL.md-like files at 'a/SKILL.md', " +
        "'b/SKILL.md'. Put SKILL.md at the root of the upload, or everything in one folder that has SKILL.md.",
    );
  });

  it('refuses a top folder with files beside it at the root', () => {
    expect(() => skillRootOf([file('my-skill/SKILL.md'), file('README.md')])).toThrow(
      /found top-level 'my-skill\/', 'README.md'/,
    );
  });

  it('refuses an upload without SKILL.md', () => {
    const refusal = (): unknown => skillRootOf([file('my-skill/README.md')]);

    expect(refusal).toThrow(/found top-level 'my-skill\/', and no SKILL.md anywhere/);
    expect(refusal).toThrow(AppError);
  });

  it('refuses SKILL.md only deeper than the one top folder, and a wrongly cased skill.md', () => {
    expect(() => skillRootOf([file('outer/inner/SKILL.md')])).toThrow(
      /SKILL.md-like files at 'outer\/inner\/SKILL.md'/,
    );
    expect(() => skillRootOf([file('skill.md')])).toThrow(/SKILL.md-like files at 'skill.md'/);
  });

  it('refuses an upload of nothing but macOS metadata', () => {
    expect(() => skillRootOf([file('__MACOSX/x'), file('.DS_Store')])).toThrow(/found no files besides macOS metadata/);
  });

  it('answers INVALID_ARCHIVE with what was found in details', () => {
    try {
      skillRootOf([file('a/x'), file('b/SKILL.md')]);
      throw new Error('accepted');
    } catch (error) {
      expect(error).toMatchObject({
        code: ErrorCode.INVALID_ARCHIVE,
        details: { topLevel: ['a/', 'b/'], skillFiles: ['b/SKILL.md'] },
      });
    }
  });
});
