import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { abortError, headerRecord } from '../../src/infra/llm/model-fetch.js';

/**
 * The baseline of bench/model-fetch.bench.ts: a hand-written `fetch` over node:http(s) that ignores proxies, against
 * which src/infra/llm/model-fetch.ts (undici's `request`) is measured. node:http(s) with keep-alive agents instead of
 * the global (undici) fetch. A turn makes at least two provider calls, and on this path each costs
 * far less CPU and leaves far less garbage that outlives a young-generation GC (measured in
 * bench/results/http.md), which is most of what a turn costs the server besides the model itself.
 *
 * It keeps the contract the AI SDK relies on:
 * - string or URL input; method, headers, a string or byte body, and `signal`;
 * - a request that meets a kept-alive connection the server has closed is sent once more on a
 *   new one (as Node's documentation advises);
 * - a connection that cannot be made or breaks before the answer begins rejects like fetch
 *   (`TypeError('fetch failed')` with the cause), so the SDK reports "Cannot connect to API: …"
 *   and may retry; an abort rejects with an `AbortError`; an answer that breaks off rejects with
 *   what happened;
 * - event streams are handed over as they arrive; any other body is read whole first (at most
 *   MAX_BUFFERED_BYTES: a bigger answer is garbage from a chat model and fails the call).
 * Redirects are not followed (model APIs do not redirect; a 3xx surfaces as the provider's error).
 * Anything else (a Request object, a stream or form body) goes to the global fetch unchanged.
 */
export const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;

// As Node's own global agents: idle sockets close after 5 s, or sooner when the server's
// Keep-Alive header says it closes them first, so a request rarely meets a socket the server shut.
const AGENT_OPTIONS = { keepAlive: true, scheduling: 'lifo', timeout: 5000 } as const;
const httpAgent = new http.Agent(AGENT_OPTIONS);
const httpsAgent = new https.Agent(AGENT_OPTIONS);

const NULL_BODY_STATUSES = new Set([204, 205, 304]);

export function nodeFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const body = init.body;
  if (input instanceof Request || (body != null && typeof body !== 'string' && !(body instanceof Uint8Array)))
    return globalThis.fetch(input, init);
  const url = input instanceof URL ? input : new URL(input);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return globalThis.fetch(input, init);
  const method = (init.method ?? 'GET').toUpperCase();
  const signal = init.signal ?? undefined;

  const secure = url.protocol === 'https:';
  const options = { method, headers: headerRecord(init.headers), agent: secure ? httpsAgent : httpAgent, signal };

  return new Promise<Response>((resolve, reject) => {
    let settled = false;
    const succeed = (make: () => Response) => {
      if (settled) return;
      try {
        const response = make();
        settled = true;
        resolve(response);
      } catch (error) {
        fail(error);
      }
    };
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      reject(signal?.aborted ? abortError(signal) : error);
    };
    const send = (firstTry: boolean) => {
      let responded = false;
      const request = (secure ? https : http).request(url, options, (response) => {
        responded = true;
        const status = response.statusCode ?? 0;
        if (status < 200 || status > 599) {
          response.destroy();
          fail(new Error(`invalid HTTP status ${status}`));
          return;
        }
        const responseInit: ResponseInit = {
          status,
          statusText: response.statusMessage ?? '',
          headers: responseHeaders(response.rawHeaders),
        };
        if (method === 'HEAD' || NULL_BODY_STATUSES.has(status)) {
          response.resume();
          succeed(() => new Response(null, responseInit));
          return;
        }
        if (/^text\/event-stream\b/i.test(response.headers['content-type'] ?? '')) {
          succeed(() => new Response(Readable.toWeb(response) as ReadableStream<Uint8Array>, responseInit));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_BUFFERED_BYTES) {
            response.destroy();
            fail(new Error(`the response body is larger than ${MAX_BUFFERED_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', fail);
        response.on('close', () => {
          if (!response.complete) fail(new Error('the connection closed before the response was complete'));
        });
        response.on('end', () =>
          succeed(() => new Response(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), responseInit)),
        );
      });
      request.on('error', (error: NodeJS.ErrnoException) => {
        if (responded || error.name === 'AbortError') fail(error);
        // A kept-alive connection the server closed while it sat idle: once more on a new one.
        else if (firstTry && request.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE'))
          send(false);
        // Before an answer began it is a connection failure, reported as fetch reports it.
        else fail(new TypeError('fetch failed', { cause: error }));
      });
      request.end(body ?? undefined);
    };
    send(true);
  });
}

function responseHeaders(raw: string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  return headers;
}
