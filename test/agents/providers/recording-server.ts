import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a scripted model server received, as sent. */
export interface ProviderRequest {
  method: string;
  /** Path and query, e.g. `/v1/messages?beta=true`. */
  path: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body (undefined for an empty or non-JSON body; `raw` has it). */
  body: unknown;
  raw: string;
}

/** Answers one request: write the whole response (status, headers, JSON or SSE) to `res`. */
export type ProviderHandler = (request: ProviderRequest, res: ServerResponse) => void | Promise<void>;

/**
 * The HTTP side every scripted provider shares: a server on 127.0.0.1 (a free port) that records
 * each request in `requests` before handing it to the provider's handler. A handler that throws
 * answers 500 with the error, so a broken script shows in the agent's output and in `requests`.
 */
export class RecordingServer {
  readonly requests: ProviderRequest[] = [];
  private server: Server | undefined;
  /** `http://127.0.0.1:<port>`. */
  origin = '';

  constructor(private readonly handler: ProviderHandler) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.receive(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = raw === '' ? undefined : JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const request: ProviderRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body,
      raw,
    };
    this.requests.push(request);
    try {
      await this.handler(request, res);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `scripted provider failed: ${(error as Error).message}` } }));
    }
  }
}

/** Every string inside a JSON value (keys excluded), depth first. */
export function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringsIn);
  return [];
}

/** Whether some string inside `value` contains `text` (so escaping in the wire format does not matter). */
export function mentions(value: unknown, text: string): boolean {
  return stringsIn(value).some((string) => string.includes(text));
}
