import { Agent, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fastify, { type FastifyInstance } from 'fastify';
import { AppError, ErrorCode } from '@skillhost/core';
import { multipartOf, tarGzOf, zipOf } from '../../../test/support/skill-archives.js';
import { toErrorBody } from '../../api/errors/app-exception.filter.js';
import {
  readSkillUpload,
  type UploadedFile,
  type UploadLimits,
} from '../../domain/skills/store/skill-upload.reader.js';
import { acceptJsonBodiesOnly } from './http-hardening.js';
import { acceptSkillUploads } from './upload-bodies.js';

const LIMITS: UploadLimits = { maxBytes: 1024 * 1024, maxFiles: 100 };
const MiB = 1024 * 1024;

async function refusalOf(upload: Promise<unknown>): Promise<AppError> {
  const outcome = await upload.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a refusal, got ${JSON.stringify(outcome.value)}`);
  expect(outcome.error).toBeInstanceOf(AppError);
  return outcome.error as AppError;
}

describe(acceptSkillUploads.name, () => {
  let app: FastifyInstance;
  let port: number;
  const uploads: Promise<UploadedFile[]>[] = [];

  beforeAll(async () => {
    app = fastify({ forceCloseConnections: true });
    app.setErrorHandler((error, _request, reply) => {
      const { status, body } = toErrorBody(error);
      return reply.status(status).send(body);
    });
    acceptJsonBodiesOnly(app);
    acceptSkillUploads(app, [{ method: 'post', url: '/v1/skills/:kind' }]);
    app.post('/v1/skills/:kind', async (request) => {
      const upload = readSkillUpload(request.body as Readable, request.headers['content-type'] ?? '', LIMITS);
      uploads.push(upload);
      const files = await upload;
      return { paths: files.map((entry) => entry.path).sort() };
    });
    app.post('/v1/other', async (request) => ({ echo: request.body }));
    app.get('/v1/other', async () => ({ ok: true }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await app.close();
  });

  /** Over a real socket: light-my-request's inject cannot load under Jest's ESM mode. */
  function send(
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: Buffer | string,
  ): Promise<{ status: number; body: unknown }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) });
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  it('hands the upload route the raw stream for each upload type', async () => {
    const files = { 'SKILL.md': 'x', 'a/b.md': 'y' };

    for (const { body, contentType } of [await zipOf(files), multipartOf(files), await tarGzOf(files)]) {
      expect(await send('POST', '/v1/skills/x', { 'content-type': contentType }, body)).toEqual({
        status: 200,
        body: { paths: ['SKILL.md', 'a/b.md'] },
      });
    }
  });

  it('answers 415 for an upload type on any other route, as for any other non-JSON body', async () => {
    const reply = await send('POST', '/v1/other', { 'content-type': 'application/zip' }, Buffer.from('PK'));

    expect(reply.status).toBe(415);
    expect(reply.body).toEqual({
      code: 'UNSUPPORTED_MEDIA_TYPE',
      message:
        "A body of type 'application/zip' is not accepted: send JSON with `Content-Type: application/json` (UTF-8).",
      details: { contentType: 'application/zip' },
    });
  });

  it('leaves JSON on other routes, bodiless requests and other types as they were', async () => {
    const json = await send('POST', '/v1/other', { 'content-type': 'application/json' }, JSON.stringify({ a: 1 }));
    const bodiless = await send('GET', '/v1/other', { 'content-type': 'application/zip' });
    const xml = await send('POST', '/v1/skills/x', { 'content-type': 'text/xml' }, '<a/>');

    expect(json).toEqual({ status: 200, body: { echo: { a: 1 } } });
    expect(bodiless).toEqual({ status: 200, body: { ok: true } });
    expect(xml).toMatchObject({ status: 415, body: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
  });

  it("answers the reader's refusal over a real socket while the client is still sending", async () => {
    // Over the body cap: the answer must reach the client although the body was not read whole.
    // The reader drains the rest instead of destroying the request, so a keep-alive connection
    // survives (closing it with unread data would reset it, and the client might never see the 413).
    const agent = new Agent({ keepAlive: true });
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/v1/skills/x',
      headers: { 'content-type': 'application/zip' },
      agent,
    });
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req.on('error', reject);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      });
    });
    const chunk = Buffer.alloc(64 * 1024);
    let sent = 0;
    const send = (): void => {
      while (sent < 8 * MiB && !req.destroyed) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', send);
      }
      req.end();
    };
    send();

    try {
      const { status, body } = await response;

      expect(status).toBe(413);
      expect(JSON.parse(body)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { limit: 'maxBodyBytes' } });
    } finally {
      agent.destroy();
    }
  });

  it('rejects, without an unhandled error, when the client hangs up mid-upload', async () => {
    const before = uploads.length;
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/v1/skills/x',
      headers: { 'content-type': 'application/gzip', 'content-length': '100000' },
      agent: false,
    });
    req.on('error', () => undefined);
    req.write(gzipSync(Buffer.alloc(10_000)).subarray(0, 50));
    while (uploads.length === before) await new Promise((resolve) => setTimeout(resolve, 10));
    req.destroy();

    const error = await refusalOf(uploads[before]);

    expect(error).toMatchObject({
      code: ErrorCode.INVALID_ARCHIVE,
      message: 'The upload was not received whole (aborted); send it again.',
    });
    // The server goes on answering.
    expect(await send('GET', '/v1/other')).toEqual({ status: 200, body: { ok: true } });
  });
});
