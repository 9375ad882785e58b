import { Readable } from 'node:stream';
import { type Dispatcher, EnvHttpProxyAgent, errors, Pool, request } from 'undici';

/** A non-stream answer larger than this is garbage from a chat model and fails the call. */
export const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;

/** `[app.proxy]`: empty strings for none (the environment was read by the configuration, not here). */
export interface ProxySettings {
  http: string;
  https: string;
  noProxy: string;
}

export type ModelFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/** The dispatcher every model call goes through; close it at shutdown. */
export function modelDispatcher(proxy: ProxySettings): Dispatcher {
  return new EnvHttpProxyAgent({
    // '' rather than undefined: undici would read the process environment itself.
    httpProxy: proxy.http,
    httpsProxy: proxy.https || proxy.http,
    noProxy: proxy.noProxy,
    // An http:// provider's calls go to the proxy as plain requests, as proxies expect (many allow CONNECT to port
    // 443 only); https:// ones through a CONNECT tunnel.
    proxyTunnel: false,
    // Every pool, the proxies' own included (their options do not reach the pools they make), without time limits.
    factory: (origin: string | URL, options: object) =>
      new Pool(origin, { ...options, headersTimeout: 0, bodyTimeout: 0 }),
  });
}

/**
 * The `fetch` the model providers are given: undici's `request` on one keep-alive dispatcher, which
 * honours the operator's proxies (`[app.proxy]`: HTTP_PROXY, HTTPS_PROXY, NO_PROXY). `request` costs
 * the server far less CPU per call than a WHATWG `fetch` (bench/results/model-fetch.md), and a turn
 * makes at least two provider calls.
 *
 * It keeps the contract the AI SDK relies on:
 * - string or URL input; method, headers, a string or byte body, and `signal`;
 * - a request that meets a kept-alive connection the server has closed is sent once more on a
 *   new one (a connection that had carried an answer and then broke before this one's);
 * - a connection that cannot be made or breaks before the answer begins rejects like fetch
 *   (`TypeError('fetch failed')` with the cause), so the SDK reports "Cannot connect to API: …"
 *   and may retry; an abort before the answer, or while a JSON body is read, rejects with an `AbortError`; an event
 *   stream aborted after its headers ends with the signal's reason (the turn tells an abort by its signal); an answer
 *   that breaks off rejects with what happened;
 * - event streams are handed over as they arrive; any other body is read whole first (at most
 *   MAX_BUFFERED_BYTES: a bigger answer is garbage from a chat model and fails the call).
 * Redirects are not followed (model APIs do not redirect; a 3xx surfaces as the provider's error).
 * No time limit of undici's own, proxied or not: the turn's `timeout_ms` (the signal) bounds each call.
 * A Request object, or a stream, form or blob body, is read into bytes first (as `new Request` reads it) and sent the
 * same way.
 */
export function modelFetch(dispatcher: Dispatcher): ModelFetch {
  return async (input, init = {}) => {
    const body = init.body;
    if (input instanceof Request || (body != null && typeof body !== 'string' && !(body instanceof Uint8Array)))
      return sendRequest(dispatcher, new Request(input, init));
    const url = input instanceof URL ? input : new URL(input);
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new TypeError('fetch failed', { cause: new Error(`unsupported protocol ${url.protocol}`) });
    return send(dispatcher, url, init, body ?? undefined, true);
  };
}

async function sendRequest(dispatcher: Dispatcher, input: Request): Promise<Response> {
  const body = input.body === null ? undefined : new Uint8Array(await input.arrayBuffer());
  const init = { method: input.method, headers: input.headers, signal: input.signal };
  return send(dispatcher, new URL(input.url), init, body, true);
}

async function send(
  dispatcher: Dispatcher,
  url: URL,
  init: RequestInit,
  body: string | Uint8Array | undefined,
  firstTry: boolean,
): Promise<Response> {
  const method = (init.method ?? 'GET').toUpperCase() as Dispatcher.HttpMethod;
  const signal = init.signal ?? undefined;
  let answer: Dispatcher.ResponseData;
  try {
    answer = await request(url, { dispatcher, method, headers: headerRecord(init.headers), body, signal });
  } catch (error) {
    if (signal?.aborted) throw abortError(signal);
    // A kept-alive connection the server closed while it sat idle (it had answered on it before): once more.
    if (firstTry && droppedKeptAlive(error)) return send(dispatcher, url, init, body, false);
    // Before an answer began it is a connection failure, reported as fetch reports it.
    throw new TypeError('fetch failed', { cause: error });
  }
  return responseOf(answer, method, signal);
}

async function responseOf(
  answer: Dispatcher.ResponseData,
  method: string,
  signal: AbortSignal | undefined,
): Promise<Response> {
  const { statusCode: status, body } = answer;
  if (status < 200 || status > 599) {
    body.destroy();
    throw new Error(`invalid HTTP status ${status}`);
  }
  const init: ResponseInit = { status, statusText: answer.statusText, headers: responseHeaders(answer.headers) };
  if (method === 'HEAD' || NULL_BODY_STATUSES.has(status)) {
    await body.dump();
    return new Response(null, init);
  }
  if (/^text\/event-stream\b/i.test(String(answer.headers['content-type'] ?? '')))
    return new Response(Readable.toWeb(body) as ReadableStream<Uint8Array>, init);
  try {
    return new Response(await readCapped(body), init);
  } catch (error) {
    throw signal?.aborted ? abortError(signal) : error;
  }
}

async function readCapped(body: Dispatcher.ResponseData['body']): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BUFFERED_BYTES) {
      body.destroy();
      throw new Error(`the response body is larger than ${MAX_BUFFERED_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
}

/**
 * The socket broke before this call's answer after bytes had been read on it: in practice a kept-alive connection the
 * server closed while it sat idle (rarely, a fresh one that broke in the middle of the headers: sent once more too).
 */
function droppedKeptAlive(error: unknown): boolean {
  return error instanceof errors.SocketError && (error.socket?.bytesRead ?? 0) > 0;
}

/** A request's headers as a plain record (what node:http and undici's `request` take). */
export function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  if (headers == null) return {};
  if (headers instanceof Headers) return Object.fromEntries(headers.entries());
  if (Array.isArray(headers)) return Object.fromEntries(headers);
  const record: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers as Record<string, string | undefined>))
    if (value !== undefined) record[name] = value;
  return record;
}

function responseHeaders(raw: Dispatcher.ResponseData['headers']): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value)) for (const one of value) headers.append(name, one);
    else if (value !== undefined) headers.append(name, value);
  }
  return headers;
}

/** The `AbortError` fetch rejects with for an aborted signal: its reason when that is one, else a new one. */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error && reason.name === 'AbortError'
    ? reason
    : new DOMException('This operation was aborted', 'AbortError');
}
