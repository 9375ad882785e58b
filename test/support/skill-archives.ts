import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { ZipFile } from 'yazl';

/** Files by relative path, as a skill upload carries them. */
export type UploadFiles = Record<string, string | Buffer>;

export interface UploadBody {
  body: Buffer;
  contentType: string;
}

/** A zip of the files (deflated), as a user would upload it. */
export async function zipOf(files: UploadFiles): Promise<UploadBody> {
  const zip = new ZipFile();
  for (const [path, content] of Object.entries(files)) zip.addBuffer(Buffer.from(content), path);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return { body: Buffer.concat(chunks), contentType: 'application/zip' };
}

/**
 * A zip of the files (stored, not deflated) in which one byte of `corrupted`'s content was changed
 * after the archive was made: every header still holds the CRC-32 of the original content, as when
 * an archive is damaged in transit or on disk.
 */
export async function zipWithChangedByteOf(files: UploadFiles, corrupted: string): Promise<UploadBody> {
  const zip = new ZipFile();
  for (const [path, content] of Object.entries(files)) zip.addBuffer(Buffer.from(content), path, { compress: false });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const content = Buffer.from(files[corrupted]);
  const at = body.indexOf(content);
  if (content.length === 0 || at === -1) throw new Error(`'${corrupted}' has no content to change in the archive`);
  body[at] ^= 0x01;
  return { body, contentType: 'application/zip' };
}

/** A gzipped tar of the files; `entries` adds raw headers (symlinks, devices…) for attacks. */
export async function tarGzOf(
  files: UploadFiles,
  entries: {
    name: string;
    type: 'symlink' | 'link' | 'character-device' | 'fifo' | 'directory';
    linkname?: string;
  }[] = [],
): Promise<UploadBody> {
  const tar = pack();
  for (const [name, content] of Object.entries(files)) tar.entry({ name }, Buffer.from(content));
  for (const entry of entries) tar.entry({ name: entry.name, type: entry.type, linkname: entry.linkname });
  tar.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of tar) chunks.push(chunk as Buffer);
  return { body: gzipSync(Buffer.concat(chunks)), contentType: 'application/gzip' };
}

/** multipart/form-data with one part per file whose filename is its relative path. */
export function multipartOf(files: UploadFiles): UploadBody {
  const boundary = `----skillhost${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [path, content] of Object.entries(files)) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; ` +
          `filename="${path}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
    );
    parts.push(Buffer.from(content), Buffer.from('\r\n'));
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}
