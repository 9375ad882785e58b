/**
 * Raw HTTP to `/mcp`, for tests that send what the official client never would: any method, body,
 * `accept`, content type and session id, answered as sent.
 */
import type { WireJson } from './wire-json.js';

/** The `accept` a Streamable HTTP client sends. */
export const BOTH = 'application/json, text/event-stream';

/** A JSON-RPC request's body. */
export const rpcBody = (method: string, params?: unknown, id: unknown = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

/** `json`: the JSON body, or the first JSON-RPC message of an SSE body; `messages`: all of them. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: WireJson;
  messages: WireJson[];
}

/**
 * `accept` / `contentType` null: no such header; by default both media types, and JSON for a body. `headers`: more,
 * under those.
 */
export interface Send {
  key?: string;
  session?: string;
  body?: string | Buffer;
  accept?: string | null;
  contentType?: string | null;
  headers?: Record<string, string>;
}

export async function send(base: string, method: string, path: string, options: Send = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  if (options.accept !== null) headers.accept = options.accept ?? BOTH;
  if (options.body !== undefined && options.contentType !== null)
    headers['content-type'] = options.contentType ?? 'application/json';
  if (options.session !== undefined) headers['mcp-session-id'] = options.session;
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : Buffer.from(options.body),
  });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  let json: WireJson;
  let messages: WireJson[] = [];
  if (type.includes('event-stream')) {
    messages = text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => JSON.parse(line.slice(5)));
    json = messages[0];
  } else if (type.includes('json') && text !== '') {
    json = JSON.parse(text);
    messages = Array.isArray(json) ? json : [json];
  }
  return { status: response.status, headers: response.headers, text, json, messages };
}
