import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppConfig } from '../../config/app-config.js';
import { AppError, ErrorCode } from '@skillhost/core';
import { createHostCheck } from './host-check.js';
import { gatewayJsonLimits, JSON_LIMITS, type JsonLimits, parseJsonBody } from '../../api/http/pipes/json-body.js';
import { GATEWAY_PATH } from '../../api/gateway/gateway.controller.js';

/**
 * What the HTTP server accepts before any route runs, for every front door (REST, GraphQL, its
 * WebSocket upgrades, the static files): bodies in JSON only, `Host` names when auth is off
 * (`authMode` none), CORS only for configured origins; and no answer sniffed into another type.
 * Called by createApp before `app.init()`, with the Nest application created with
 * `bodyParser: false` (so no form parser exists at all).
 */
export function hardenHttp(app: NestFastifyApplication, config: AppConfig, authMode: 'api_key' | 'none'): void {
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  closeRefusedUpgrades(fastify);
  if (authMode === 'none') refuseForeignHosts(fastify, config);
  const gatewayLimits = gatewayJsonLimits(config.app.gateway);
  acceptJsonBodiesOnly(fastify, (url) => (url.startsWith(`/${GATEWAY_PATH}/`) ? gatewayLimits : JSON_LIMITS));
  allowConfiguredOrigins(app, config.app.http.corsOrigins);
  forbidSniffing(fastify);
}

/**
 * Every answer is what its Content-Type says: no browser guesses a JSON error, a skill's text or
 * a page's script into HTML.
 */
function forbidSniffing(fastify: FastifyInstance): void {
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    void reply.header('x-content-type-options', 'nosniff');
    done(null, payload);
  });
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
    if (isWebSocketUpgrade(request)) {
      reply.raw.once('finish', () => {
        const socket = request.raw.socket;
        socket.end();
        socket.once('finish', () => socket.destroy());
      });
    }
    done();
  });
}

export function isWebSocketUpgrade(request: FastifyRequest): boolean {
  return request.headers.upgrade !== undefined && /\bupgrade\b/i.test(request.headers.connection ?? '');
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
        `Request refused (${shown}): with authentication off this server answers only requests naming its ` +
          `listening address, localhost or an [app.http] allowed_hosts entry. Add the name to allowed_hosts, or ` +
          `require API keys ([app.auth] mode = "api_key").`,
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
export function acceptJsonBodiesOnly(
  fastify: FastifyInstance,
  limitsFor: (url: string) => JsonLimits = () => JSON_LIMITS,
): void {
  fastify.removeAllContentTypeParsers();
  const defaultParser = fastify.getDefaultJsonParser('error', 'error');
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      done(
        null,
        parseJsonBody(body as Buffer, (text, parsed) => defaultParser(request, text, parsed), limitsFor(request.url)),
      );
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  fastify.addHook('onRequest', (request, _reply, done) => done(unsupportedBody(request)));
}

const BODYLESS_METHODS = new Set(['GET', 'HEAD']);

/**
 * A route that reads its request's raw body itself, in its own media types and with its own limits (the OAuth
 * server's forms and registrations, src/api/oauth/oauth-routes.ts): registered with `config: { readsItsOwnBody: true
 * }`.
 */
function readsItsOwnBody(request: FastifyRequest): boolean {
  return (request.routeOptions.config as { readsItsOwnBody?: boolean } | undefined)?.readsItsOwnBody === true;
}

/** Whether Fastify reads a body for this request: one is announced, on a method that has one. */
export function carriesBody(request: FastifyRequest): boolean {
  const { headers } = request;
  const announced =
    headers['transfer-encoding'] !== undefined ||
    (headers['content-length'] !== undefined && headers['content-length'] !== '0');
  return announced && !BODYLESS_METHODS.has(request.method);
}

/**
 * The 415 for a body whose media type `accepts` refuses (by default: any type without a parser);
 * undefined when the request has no body or its type is accepted. Also used by the skill upload
 * routes (src/domain/skills/store/upload-bodies.ts) to refuse upload types everywhere else.
 */
export function unsupportedBody(
  request: FastifyRequest,
  accepts: (mediaType: string) => boolean = (mediaType) => request.server.hasContentTypeParser(mediaType),
): AppError | undefined {
  // A body on an unknown route is never parsed: the answer is 404.
  if (!carriesBody(request) || request.is404 || readsItsOwnBody(request)) return undefined;
  const contentType = request.headers['content-type'];
  const media = contentType === undefined ? undefined : parseMediaType(contentType);
  if (media?.charsetOk && accepts(media.type)) return undefined;
  const what =
    contentType === undefined ? 'A body without a content type' : `A body of type '${contentType.slice(0, 100)}'`;
  return new AppError(
    ErrorCode.UNSUPPORTED_MEDIA_TYPE,
    `${what} is not accepted: send JSON with \`Content-Type: application/json\` (UTF-8).`,
    {
      contentType: contentType?.slice(0, 100) ?? null,
    },
  );
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
    // The gateway's conversation and show-work headers (api/gateway), which browser clients must be let send and read.
    allowedHeaders: [
      'authorization',
      'x-api-key',
      'content-type',
      'accept',
      'x-skillhost-conversation',
      'x-skillhost-show-work',
    ],
    exposedHeaders: ['server-timing', 'x-skillhost-truncated', 'retry-after', 'x-skillhost-conversation'],
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
 * How long a connection whose request Node refused is still read, its bytes dropped, after the
 * answer went out: a client still sending (a URL of megabytes) then reads the answer, where closing
 * at once would make the kernel reset the connection under it.
 */
const LINGER_MS = 2000;
const refusedSockets = new WeakSet<Socket>();

/**
 * Fastify's `clientErrorHandler`: requests Node's parser refuses before Fastify sees them (a request
 * line or headers over 16 KiB, a malformed request line or Content-Length, headers that never end)
 * are answered in the `{code, message}` shape too, and the connection is closed gently (see
 * LINGER_MS). A connection the client already reset, or one whose answer had begun, gets nothing.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  // While it lingers, Node reports each further chunk of the refused request again.
  if (refusedSockets.has(socket)) return;
  refusedSockets.add(socket);
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const answering = (socket as Socket & { _httpMessage?: { headersSent: boolean } })._httpMessage;
  if (!socket.writable || answering?.headersSent === true) {
    socket.destroy();
    return;
  }
  const { status, code, message } = describeClientError(error);
  const body = JSON.stringify({ code, message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; ` +
      `charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection:` +
      ` close\r\n\r\n${body}`,
  );
  const linger = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(linger));
}

/** Node's parse errors carry the chunk being parsed and how far into it the parser got. */
type ParseError = NodeJS.ErrnoException & { rawPacket?: unknown; bytesParsed?: number };

function describeClientError(error: ParseError): { status: number; code: ErrorCode; message: string } {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      if (overflowsInRequestLine(error.rawPacket, error.bytesParsed)) {
        return {
          status: 414,
          code: ErrorCode.URI_TOO_LONG,
          message: 'The URL is too long (the request line is over 16 KiB); send long input in a JSON body instead.',
        };
      }
      return {
        status: 431,
        code: ErrorCode.HEADERS_TOO_LARGE,
        message:
          'The request line and headers are too large (over 16 KiB in all); use a shorter URL, or send fewer or ' +
          'shorter headers.',
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        code: ErrorCode.REQUEST_TIMEOUT,
        message: 'The request was not received in time; send it again.',
      };
    default:
      return {
        status: 400,
        code: ErrorCode.VALIDATION_FAILED,
        message: `Malformed HTTP request (${error.code ?? 'parse error'}); nothing was done.`,
      };
  }
}

/**
 * Node's parser counts the request line and the headers against one limit and says only "header
 * overflow". The request line is what overflowed when the bytes it was parsing start a request
 * (a method and a space) and hold no line end up to the overflow. A request line that came in
 * pieces smaller than the limit cannot be told from a long header: that is 431.
 */
function overflowsInRequestLine(packet: unknown, parsed: number | undefined): boolean {
  if (!Buffer.isBuffer(packet)) return false;
  const head = packet.subarray(0, parsed ?? packet.length);
  return /^[A-Z]+ /.test(head.subarray(0, 16).toString('latin1')) && !head.includes(0x0a);
}
