import { networkReason } from '../cli-io.js';
import type { RemoteFile } from './sync-index.js';
import { sha256 } from './sync-folder.js';

/** An index larger than this is refused: 100,000 skills' entries fit well within it. */
const INDEX_BYTES = 64 * 1024 * 1024;

export type IndexAnswer = { notModified: true } | { notModified: false; text: string; etag?: string };

/** A server that could not be asked, or answered something sync cannot use: nothing is changed. */
export class ServerProblem extends Error {}

/**
 * The index, or that it did not change since `etag`. Redirects are refused: the key is sent to the
 * server named and nowhere else.
 */
export async function fetchIndex(server: URL, key: string | undefined, etag: string | undefined): Promise<IndexAnswer> {
  const url = new URL('.well-known/agent-skills/index.json', server);
  const headers: Record<string, string> = { ...authorization(key), accept: 'application/json' };
  if (etag !== undefined) headers['if-none-match'] = etag;
  const response = await ask(url, headers);
  if (response.status === 304) return { notModified: true };
  if (response.status !== 200) throw new ServerProblem(await refusal(url, response));
  const text = (await readCapped(response, INDEX_BYTES, url)).toString('utf8');
  const tag = response.headers.get('etag');
  return { notModified: false, text, ...(tag === null ? {} : { etag: tag }) };
}

/**
 * The server's versions.json (Skillhost's list of every version, beside the index): asked for only when a pin names
 * a version the index does not offer now.
 */
export async function fetchVersions(server: URL, key: string | undefined): Promise<string> {
  const url = new URL('.well-known/agent-skills/versions.json', server);
  const response = await ask(url, { ...authorization(key), accept: 'application/json' });
  if (response.status === 404)
    throw new ServerProblem(`${url.href} answered 404: this server lists no earlier versions (not a Skillhost?)`);
  if (response.status !== 200) throw new ServerProblem(await refusal(url, response));
  return (await readCapped(response, INDEX_BYTES, url)).toString('utf8');
}

/** One file's bytes, checked against the size and digest the index gave before anything is written. */
export async function fetchFile(file: RemoteFile, key: string | undefined): Promise<Buffer> {
  const response = await ask(file.url, authorization(key));
  if (response.status !== 200) throw new ServerProblem(`file ${file.path}: ${await refusal(file.url, response)}`);
  const bytes = await readCapped(response, file.size, file.url, file.path);
  if (bytes.length !== file.size)
    throw new ServerProblem(`file ${file.path}: the server sent ${bytes.length} bytes; the index says ${file.size}`);
  const digest = sha256(bytes);
  if (digest !== file.digest)
    throw new ServerProblem(`file ${file.path}: its bytes have digest ${digest}; the index says ${file.digest}`);
  return bytes;
}

function authorization(key: string | undefined): Record<string, string> {
  return key === undefined ? {} : { authorization: `Bearer ${key}` };
}

async function ask(url: URL, headers: Record<string, string>): Promise<Response> {
  try {
    return await fetch(url, { headers, redirect: 'error' });
  } catch (error) {
    const why = networkReason(error);
    const hint = /redirect/i.test(why) ? ' (redirects are refused: give the URL they lead to as --server)' : '';
    throw new ServerProblem(`cannot fetch ${url.href}: ${why}${hint}`);
  }
}

async function refusal(url: URL, response: Response): Promise<string> {
  const body = (await response.text().catch(() => '')).slice(0, 300).replace(/\s+/g, ' ');
  const hint =
    response.status === 401
      ? ' (set SKILLHOST_API_KEY, or --key-env NAME, to a valid API key, or store one: skillhost login)'
      : '';
  return `${url.href} answered ${response.status}${hint}${body === '' ? '' : `: ${body}`}`;
}

/** The body, read no further than `cap` bytes (a server that sends more than it said is stopped there). */
async function readCapped(response: Response, cap: number, url: URL, path?: string): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body?.getReader();
  if (reader === undefined) return Buffer.alloc(0);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > cap) {
      await reader.cancel();
      throw new ServerProblem(
        path === undefined
          ? `${url.href} sent more than ${cap} bytes`
          : `file ${path}: the server sent more than the ${cap} bytes the index says`,
      );
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
