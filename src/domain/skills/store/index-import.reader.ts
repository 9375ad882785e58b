import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { Agent, type Dispatcher, fetch, type Response } from 'undici';
import { z } from 'zod';
import { AppError, ErrorCode } from '@skillhost/core';
import { checkDestination, type DestinationPolicy, publicOnlyLookup } from './import-destination.js';
import { skillDigest } from './index-skill-digest.js';
import {
  checkUploadedFiles,
  normalizeEntryPath,
  readSkillUpload,
  skillRootOf,
  type UploadedFile,
  type UploadLimits,
  uploadKindOf,
} from './skill-upload.reader.js';

/**
 * Reads skills from another server's Agent Skills discovery index (version 0.2.0 of
 * https://github.com/cloudflare/agent-skills-discovery-rfc: Discovery Index, Integrity). Every
 * skill asked for is downloaded and checked before any is returned, so a lie anywhere installs
 * nothing: each URL must be on the index's own origin, each path relative and inside the skill,
 * each file exactly the size and digest the index declares, and the files together the skill's digest.
 * Redirects are not followed (they could lead to another origin). For a member's import, every
 * connection's address is checked as it is made (see import-destination.ts).
 */

export interface IndexedSkill {
  name: string;
  files: UploadedFile[];
  /** The digest the index gives the skill (or its SKILL.md or archive), as recorded with the version. */
  digest: string | undefined;
}

const MAX_INDEX_BYTES = 1024 * 1024;
const DIGEST = /^sha256:[0-9a-f]{64}$/i;

const indexFileSchema = z.object({
  path: z.string().min(1).max(1024),
  digest: z.string().regex(DIGEST),
  size: z.number().int().nonnegative(),
  url: z.string().min(1).max(4096),
});
const indexSkillSchema = z.object({
  name: z.string().min(1).max(64),
  type: z.enum(['skill-md', 'archive']).optional(),
  url: z.string().min(1).max(4096).optional(),
  digest: z.string().regex(DIGEST).optional(),
  files: z.array(indexFileSchema).max(10_000).optional(),
});
const indexSchema = z.object({ skills: z.array(z.unknown()).max(10_000) });

export interface IndexReadOptions {
  timeoutMs: number;
  /** A member's import: the index's host is checked, and so is each address connected to. Undefined: not checked. */
  destinations: DestinationPolicy | undefined;
}

/** The skills of the index at `indexUrl` (only `only` when given), downloaded and verified. */
export async function readIndexSkills(
  indexUrl: string,
  only: string | undefined,
  limits: UploadLimits,
  options: IndexReadOptions,
): Promise<IndexedSkill[]> {
  // Every URL fetched is on the index's origin (sameOrigin), so one check of its host covers them all.
  const checked = await checkDestination(new URL(indexUrl), options.destinations);
  const dispatcher = checked === undefined ? undefined : new Agent({ connect: { lookup: publicOnlyLookup } });
  try {
    return await readChecked(indexUrl, only, limits, options.timeoutMs, dispatcher);
  } finally {
    await dispatcher?.close();
  }
}

async function readChecked(
  indexUrl: string,
  only: string | undefined,
  limits: UploadLimits,
  timeoutMs: number,
  dispatcher: Dispatcher | undefined,
): Promise<IndexedSkill[]> {
  const signal = AbortSignal.timeout(timeoutMs);
  const download = (url: string, cap: number) => fetchCapped(url, cap, { signal, dispatcher }, indexUrl);
  const body = await download(indexUrl, MAX_INDEX_BYTES);
  const entries = parseIndex(body.bytes, indexUrl);
  const chosen = only === undefined ? entries : entries.filter((entry) => nameOf(entry) === only);
  if (chosen.length === 0) {
    const names = entries.map(nameOf).filter((name) => name !== undefined);
    throw new AppError(
      ErrorCode.VALIDATION_FAILED,
      only === undefined
        ? `The index at ${indexUrl} lists no skills.`
        : `The index at ${indexUrl} has no skill '${only}'; it has: ${names.slice(0, 50).join(', ') || 'none'}.`,
      { problems: [`source: no skill '${only ?? ''}' in the index`] },
    );
  }
  const skills: IndexedSkill[] = [];
  for (const entry of chosen) skills.push(await readEntry(checkedEntry(entry, indexUrl), indexUrl, limits, download));
  return skills;
}

function nameOf(entry: unknown): string | undefined {
  const name = (entry as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : undefined;
}

function parseIndex(bytes: Buffer, indexUrl: string): unknown[] {
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw unverified(indexUrl, 'it is not JSON');
  }
  const index = indexSchema.safeParse(json);
  if (!index.success) throw unverified(indexUrl, "it is not a discovery index (no 'skills' list)");
  return index.data.skills;
}

function checkedEntry(entry: unknown, indexUrl: string): z.infer<typeof indexSkillSchema> {
  const parsed = indexSkillSchema.safeParse(entry);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw unverified(
      indexUrl,
      `skill '${nameOf(entry) ?? '?'}' is malformed at ${issue.path.join('.')}: ${issue.message}`,
    );
  }
  return parsed.data;
}

type Download = (url: string, cap: number) => Promise<{ bytes: Buffer; contentType: string }>;

async function readEntry(
  entry: z.infer<typeof indexSkillSchema>,
  indexUrl: string,
  limits: UploadLimits,
  download: Download,
): Promise<IndexedSkill> {
  const what = `skill '${entry.name}'`;
  if (entry.files !== undefined) {
    const files = await readFiles(entry.files, what, indexUrl, limits, download);
    if (entry.digest !== undefined) checkSkillDigest(files, entry.digest, what, indexUrl);
    return { name: entry.name, files, digest: entry.digest };
  }
  if (entry.url === undefined || entry.digest === undefined)
    throw unverified(indexUrl, `${what} has neither 'files' nor a 'url' with a 'digest'`);
  const url = sameOrigin(entry.url, indexUrl, what);
  const body = await download(url, entry.type === 'archive' ? maxArchiveDownload(limits) : limits.maxBytes + 1);
  if (body.bytes.length > limits.maxBytes && entry.type !== 'archive') throw tooLarge(indexUrl, what, limits);
  checkDigest(body.bytes, entry.digest, `${what} (${url})`, indexUrl);
  if (entry.type !== 'archive')
    return { name: entry.name, files: [{ path: 'SKILL.md', bytes: body.bytes }], digest: entry.digest };
  const kind = uploadKindOf(body.contentType) !== undefined ? body.contentType : archiveTypeOf(url);
  const read = await readSkillUpload(Readable.from([body.bytes]), kind, limits);
  return { name: entry.name, files: skillRootOf(read).files, digest: entry.digest };
}

async function readFiles(
  files: z.infer<typeof indexFileSchema>[],
  what: string,
  indexUrl: string,
  limits: UploadLimits,
  download: Download,
): Promise<UploadedFile[]> {
  if (files.length > limits.maxFiles) throw tooLarge(indexUrl, what, limits);
  if (files.reduce((sum, file) => sum + file.size, 0) > limits.maxBytes) throw tooLarge(indexUrl, what, limits);
  // Every path and URL is checked before the first download.
  const planned = files.map((file) => ({
    ...file,
    path: normalizeEntryPath(file.path),
    url: sameOrigin(file.url, indexUrl, `${what}'s file '${file.path}'`),
  }));
  // Duplicates and a path that is both a file and a folder, as an archive's would be.
  checkUploadedFiles(
    planned.map((file) => ({ path: file.path, bytes: Buffer.alloc(0) })),
    limits,
  );
  const read: UploadedFile[] = [];
  for (const file of planned) {
    const { bytes } = await download(file.url, file.size + 1);
    if (bytes.length !== file.size)
      throw unverified(
        indexUrl,
        `${what}'s file '${file.path}' is ${bytes.length > file.size ? 'larger' : 'smaller'} than the ${file.size} ` +
          `bytes the index declares`,
      );
    checkDigest(bytes, file.digest, `${what}'s file '${file.path}'`, indexUrl);
    read.push({ path: file.path, bytes });
  }
  return read;
}

/** The URL resolved against the index's; refused on another origin (the index vouches for its own server only). */
function sameOrigin(url: string, indexUrl: string, what: string): string {
  let resolved: URL;
  try {
    resolved = new URL(url, indexUrl);
  } catch {
    throw unverified(indexUrl, `${what} has a URL that is not one: '${url.slice(0, 200)}'`);
  }
  if (resolved.origin !== new URL(indexUrl).origin)
    throw unverified(indexUrl, `${what} is on another origin (${resolved.origin}) than the index`);
  return resolved.href;
}

function checkDigest(bytes: Buffer, expected: string, what: string, indexUrl: string): void {
  const actual = sha256Of(bytes);
  if (actual !== expected.toLowerCase())
    throw unverified(
      indexUrl,
      `${what} does not match its digest (the index says ${expected}, the content is ${actual})`,
    );
}

/** The skill's digest as the proposal defines it, recomputed from the files downloaded (each already checked). */
function checkSkillDigest(files: UploadedFile[], expected: string, what: string, indexUrl: string): void {
  const actual = skillDigest(files.map((file) => ({ path: file.path, digest: sha256Of(file.bytes) })));
  if (actual !== expected.toLowerCase())
    throw unverified(
      indexUrl,
      `${what}'s files do not match the skill's digest (the index says ${expected}, its files make ${actual})`,
    );
}

function sha256Of(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

function archiveTypeOf(url: string): string {
  const path = new URL(url).pathname;
  if (/\.zip$/i.test(path)) return 'application/zip';
  if (/\.tar$/i.test(path)) return 'application/x-tar';
  return 'application/gzip';
}

function maxArchiveDownload(limits: UploadLimits): number {
  return limits.maxBytes + 1024 * 1024 + limits.maxFiles * 3 * 1024;
}

/** A GET that stops reading past `cap` bytes; IMPORT_SOURCE_UNREACHABLE for no answer or an error status. */
async function fetchCapped(
  url: string,
  cap: number,
  { signal, dispatcher }: { signal: AbortSignal; dispatcher: Dispatcher | undefined },
  indexUrl: string,
): Promise<{ bytes: Buffer; contentType: string }> {
  let response: Response;
  try {
    response = await fetch(url, {
      signal,
      redirect: 'manual',
      headers: { accept: 'application/json, */*' },
      ...(dispatcher === undefined ? {} : { dispatcher }),
    });
  } catch (error) {
    // A destination refused at connect time (its name resolved to a private address) says so itself.
    const cause = (error as { cause?: unknown }).cause;
    if (AppError.isInstance(cause)) throw cause;
    throw unreachable(url, signal.aborted ? 'it did not answer in time' : causeOf(error));
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw unreachable(
      url,
      `it answered ${response.status}${
        response.status >= 300 && response.status < 400 ? ' (a redirect, not followed)' : ''
      }`,
    );
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    // Leaving the loop cancels the body: one byte past what is allowed is enough to know.
    for await (const chunk of response.body ?? []) {
      total += chunk.length;
      if (total > cap) break;
      chunks.push(Buffer.from(chunk));
    }
  } catch (error) {
    throw unreachable(url, signal.aborted ? 'it did not answer in time' : causeOf(error));
  }
  if (total > cap) throw unverified(indexUrl, `${url} sends more than the ${cap - 1} bytes declared or allowed`);
  return { bytes: Buffer.concat(chunks), contentType: response.headers.get('content-type') ?? '' };
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

function unreachable(url: string, problem: string): AppError {
  return new AppError(ErrorCode.IMPORT_SOURCE_UNREACHABLE, `Cannot read ${url}: ${problem}.`, { source: url });
}

function unverified(indexUrl: string, problem: string): AppError {
  return new AppError(ErrorCode.IMPORT_VERIFICATION_FAILED, `Nothing was imported from ${indexUrl}: ${problem}.`, {
    source: indexUrl,
  });
}

function tooLarge(indexUrl: string, what: string, limits: UploadLimits): AppError {
  return new AppError(
    ErrorCode.PAYLOAD_TOO_LARGE,
    `Nothing was imported from ${indexUrl}: ${what} has more than ${limits.maxFiles} files or ${limits.maxBytes} ` +
      `bytes ([app.skills] max_install_bytes).`,
    { source: indexUrl },
  );
}
