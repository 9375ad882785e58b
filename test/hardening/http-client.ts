import type { AddressInfo } from 'node:net';
import type { LoggerService } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { query } from '../support/database.js';
import type { WireJson } from '../support/wire-json.js';

export interface Answer {
  status: number;
  headers: Headers;
  /** JSON-decoded when the answer is JSON, else the text. */
  body: WireJson;
  text: string;
}

export interface RawRequest {
  /** Sent as given, bytes and all: no content type is added for it. */
  body?: string | Uint8Array;
  /** Sent as JSON with `Content-Type: application/json`. */
  json?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

/** The app listening on 127.0.0.1 at a random port, and a fetch that sends exactly what it is given. */
export async function listen(
  app: NestFastifyApplication,
): Promise<(method: string, path: string, request?: RawRequest) => Promise<Answer>> {
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  return async (method, path, request = {}) => {
    const headers: Record<string, string> = { ...request.headers };
    let body: Uint8Array | undefined;
    if (request.json !== undefined) {
      body = Buffer.from(JSON.stringify(request.json));
      headers['content-type'] = 'application/json';
    } else if (request.body !== undefined) {
      // Bytes, so that fetch adds no content type of its own.
      body = typeof request.body === 'string' ? Buffer.from(request.body) : request.body;
    }
    if (request.contentType !== undefined) headers['content-type'] = request.contentType;
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers, body });
    const text = await response.text();
    const isJson = response.headers.get('content-type')?.includes('json') === true;
    return {
      status: response.status,
      headers: response.headers,
      body: isJson && text !== '' ? JSON.parse(text) : text,
      text,
    };
  };
}

/** What the tables hold, for "nothing was stored" (counts, and the chats' message positions). */
export async function storedState(databaseUrl: string): Promise<Record<string, number>> {
  const [row] = await query<Record<string, number>>(
    databaseUrl,
    `SELECT (SELECT count(*)::int FROM chats) AS chats,
            (SELECT coalesce(sum(last_seq), 0)::int FROM chats) AS positions,
            (SELECT count(*)::int FROM chat_messages) AS messages,
            (SELECT count(*)::int FROM chat_activated_skills) AS activations,
            (SELECT count(*)::int FROM users) AS users,
            (SELECT count(*)::int FROM api_keys) AS keys`,
  );
  return row;
}

/** A Nest logger that keeps what is logged, by level. */
export class RecordingLogger implements LoggerService {
  readonly lines: { level: string; message: string }[] = [];
  log(message: unknown): void {
    this.lines.push({ level: 'log', message: String(message) });
  }
  error(message: unknown): void {
    this.lines.push({ level: 'error', message: String(message) });
  }
  warn(message: unknown): void {
    this.lines.push({ level: 'warn', message: String(message) });
  }
  debug(message: unknown): void {
    this.lines.push({ level: 'debug', message: String(message) });
  }
  verbose(message: unknown): void {
    this.lines.push({ level: 'verbose', message: String(message) });
  }
  get errors(): string[] {
    return this.lines.filter((line) => line.level === 'error').map((line) => line.message);
  }
}
