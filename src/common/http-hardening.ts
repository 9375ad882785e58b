import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AuthService } from '../auth/auth.service.js';
import type { AppConfig } from '../config/app-config.js';
import { AppError, ErrorCode } from './app-error.js';
import { createHostCheck } from './host-check.js';
import { parseJsonBody } from './json-body.js';

/**
 * What the HTTP server accepts before any route runs, for every front door (REST, GraphQL, its
 * WebSocket upgrades, the static files): bodies in JSON only, `Host` names when auth is off, CORS
 * only for configured origins. Called by createApp before `app.init()`, with the Nest application
 * created with `bodyParser: false` (so no form parser exists at all).
 */
export function hardenHttp(app: NestFastifyApplication, config: AppConfig): void {
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  closeRefusedUpgrades(fastify);
  if (app.get(AuthService, { strict: false }).mode === 'none') refuseForeignHosts(fastify, config);
  acceptJsonBodiesOnly(fastify);
  allowConfiguredOrigins(app, config.app.http.corsOrigins);
}

/**
 * A WebSocket upgrade (GraphQL subscriptions) is routed through Fastify on its bare socket, which
 * no HTTP parser owns any more: refused by a later hook (the Host check below), it is answered
 * there and then must be closed here, or it stays half-open and `app.close()` waits for it
 * forever. An upgrade that succeeds hands the socket to the WebSocket server, and its placeholder
 * response never finishes.
 */
function closeRefusedUpgrades(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    if (request.headers.upgrade !== undefined && /\bupgrade\b/i.test(request.headers.connection ?? '')) {
      reply.raw.once('finish', () => {
        const socket = request.raw.socket;
        socket.end();
        socket.once('finish', () => socket.destroy());
      });
    }
    done();
  });
}

/**
 * Against DNS rebinding: without authentication, a page on another site that points its own name
 * at this server must not be answered (see host-check.ts). An `onRequest` hook, so it also covers
 * WebSocket upgrades (routed through Fastify) and unknown routes.
 */
function refuseForeignHosts(fastify: FastifyInstance, config: AppConfig): void {
  const allowed = createHostCheck({ listenHost: config.app.host, allowedHosts: config.app.http.allowedHosts });
  fastify.addHook('onRequest', (request, _reply, done) => {
    const host = request.headers.host;
    if (allowed(host)) return done();
    const shown = host === undefined ? 'no Host header' : `Host '${host.slice(0, 100)}'`;
    done(
      new AppError(
        ErrorCode.MISDIRECTED_REQUEST,
        `Request refused (${shown}): with authentication off this server answers only requests naming its listening address, localhost or an [app.http] allowed_hosts entry. Add the name to allowed_hosts, or require API keys ([app.auth] mode = "api_key").`,
      ),
    );
  });
}

/**
 * Bodies are JSON (UTF-8, bounded depth) on every route; a route's own plugin may accept one more
 * type in its context (mercurius: `application/graphql` on /graphql). Anything else — a form post
 * a web page can send without asking, XML, multipart, a missing or malformed content type — is
 * 415 before a byte of it is read.
 */
export function acceptJsonBodiesOnly(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  const defaultParser = fastify.getDefaultJsonParser('error', 'error');
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      done(null, parseJsonBody(body as Buffer, (text, parsed) => defaultParser(request, text, parsed)));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  fastify.addHook('onRequest', (request, _reply, done) => done(unsupportedBody(request)));
}

const BODYLESS_METHODS = new Set(['GET', 'HEAD']);

/**
 * The 415 for a body whose media type `accepts` refuses (by default: any type without a parser);
 * undefined when the request has no body or its type is accepted. Also used by the skill upload
 * routes (src/skills/store/upload-bodies.ts) to refuse upload types everywhere else.
 */
export function unsupportedBody(
  request: FastifyRequest,
  accepts: (mediaType: string) => boolean = (mediaType) => request.server.hasContentTypeParser(mediaType),
): AppError | undefined {
  const { headers } = request;
  const hasBody = headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
  // A body on an unknown route is never read: the answer is 404.
  if (!hasBody || BODYLESS_METHODS.has(request.method) || request.is404) return undefined;
  const contentType = headers['content-type'];
  const media = contentType === undefined ? undefined : parseMediaType(contentType);
  if (media !== undefined && media.charsetOk && accepts(media.type)) return undefined;
  const what = contentType === undefined ? 'A body without a content type' : `A body of type '${contentType.slice(0, 100)}'`;
  return new AppError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, `${what} is not accepted: send JSON with \`Content-Type: application/json\` (UTF-8).`, {
    contentType: contentType?.slice(0, 100) ?? null,
  });
}

/** `type/subtype` lower-case, and whether its charset (if any) is UTF-8; undefined when malformed. */
export function parseMediaType(header: string): { type: string; charsetOk: boolean } | undefined {
  const [essence, ...parameters] = header.split(';');
  const type = essence.trim().toLowerCase();
  if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(type)) return undefined;
  let charsetOk = true;
  for (const parameter of parameters) {
    const [name, value = ''] = parameter.split('=');
    if (name.trim().toLowerCase() === 'charset') charsetOk = /^"?utf-?8"?$/i.test(value.trim());
  }
  return { type, charsetOk };
}

/** CORS is off (no header, preflights unanswered) unless `[app.http] cors_origins` names origins. */
function allowConfiguredOrigins(app: NestFastifyApplication, origins: readonly string[]): void {
  if (origins.length === 0) return;
  app.enableCors({
    origin: origins.includes('*') ? '*' : origins.map(originOf),
    methods: ['GET', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: ['authorization', 'x-api-key', 'content-type', 'accept'],
    exposedHeaders: ['server-timing', 'x-skillhost-truncated', 'retry-after'],
    maxAge: 600,
  });
}

/** As browsers send `Origin`: scheme, host and a non-default port, no path or trailing slash. */
function originOf(configured: string): string {
  try {
    return new URL(configured).origin;
  } catch {
    return configured;
  }
}

/**
 * Fastify's `clientErrorHandler`: requests Node's parser refuses before Fastify sees them (headers
 * over 16 KiB, a malformed request line or Content-Length) are answered in the `{code, message}`
 * shape too. A connection the client already reset gets nothing.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, code, message } = describeClientError(error);
  if (socket.writable) {
    const body = JSON.stringify({ code, message });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

function describeClientError(error: NodeJS.ErrnoException): { status: number; code: ErrorCode; message: string } {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: ErrorCode.HEADERS_TOO_LARGE, message: 'The request headers are too large (over 16 KiB in all); send fewer or shorter headers.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: ErrorCode.REQUEST_TIMEOUT, message: 'The request was not received in time; send it again.' };
    default:
      return { status: 400, code: ErrorCode.VALIDATION_FAILED, message: `Malformed HTTP request (${error.code ?? 'parse error'}); nothing was done.` };
  }
}
