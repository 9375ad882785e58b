import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { type FastifyInstance, LogController } from 'fastify';
import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';
import type { LogFormat, LogLevel } from '../../config/app-config.js';
import { runInRequest } from '../../domain/shared/request-scope.js';

export type AppLogger = Logger;

/** `auto` is `pretty` for a person at a terminal, `json` (one object a line) for everything that collects logs. */
export function resolveLogFormat(format: LogFormat, isTerminal: boolean): 'json' | 'pretty' {
  if (format === 'auto') return isTerminal ? 'pretty' : 'json';
  return format;
}

/**
 * Never written: credentials in headers and under the names keys travel by, at the top of a line's fields (where
 * Nest's logger puts an object's fields). No wildcard paths (`*.key`): they make pino walk every field of every line,
 * the request line included (a third of its cost), and no line the app writes nests a credential. The request line
 * itself carries no headers and no bodies at all.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers.cookie',
  'authorization',
  'apiKey',
  'key',
];

let stampedAt = Number.NaN;
let stamp = '';

/** pino's `isoTime`, made once per millisecond: a busy server writes several lines in each. */
export function isoTimeOncePerMs(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}

/** The pino options for `[app.logging]` (pure, so the choices are tested without a stream). */
export function loggerOptions(settings: { level: LogLevel }, format: 'json' | 'pretty'): LoggerOptions {
  return {
    level: settings.level,
    timestamp: isoTimeOncePerMs,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    // JSON lines name their level ("info"); the pretty printer reads pino's numbers.
    ...(format === 'json' ? { formatters: { level: (label: string) => ({ level: label }) } } : {}),
  };
}

/**
 * The app's one pino logger, for `[app.logging]`: JSON lines to stdout, or readable lines when the
 * format is `pretty` (or `auto` on a terminal). `destination` replaces stdout (tests capture it).
 * Writes are synchronous, so the last lines before a crash or exit are not lost. A cluster's worker names itself in
 * every line (`worker`, beside pino's `pid`).
 */
export function createAppLogger(
  settings: { level: LogLevel; format: LogFormat },
  destination?: DestinationStream,
  worker?: number,
): AppLogger {
  const terminal = destination === undefined && process.stdout.isTTY === true;
  const format = resolveLogFormat(settings.format, terminal);
  const options = { ...loggerOptions(settings, format), ...(worker === undefined ? {} : { base: workerBase(worker) }) };
  if (format === 'pretty') {
    // Required here, not imported: a server logging JSON lines (every deployment) never loads it.
    const { build: prettyStream } = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
    return pino(
      options,
      prettyStream({
        destination: destination ?? 1,
        sync: true,
        colorize: terminal,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname',
      }),
    );
  }
  return pino(options, destination ?? pino.destination({ dest: 1, sync: true }));
}

/** pino's own fields (pid, hostname) and the worker's id. */
function workerBase(worker: number): Record<string, unknown> {
  return { pid: process.pid, hostname: hostname(), worker };
}

export const REQUEST_ID_HEADER = 'x-request-id';

/** What a client may send as its own request id: short, and nothing that could forge a log line. */
const ACCEPTED_REQUEST_ID = /^[\w.:/+=@-]{1,128}$/;

/** The caller's `x-request-id` when it is a sensible one, else a new UUID (Fastify's `genReqId`). */
export function requestIdFor(request: Pick<IncomingMessage, 'headers'>): string {
  const given = request.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && ACCEPTED_REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * Fastify's part: request ids, and the app's logger as Fastify's, so each request's `request.log`
 * carries `reqId`. Fastify's own two lines per request are off; RequestObserver writes one.
 */
export function fastifyLoggingOptions(logger: AppLogger | undefined) {
  return {
    genReqId: requestIdFor,
    logController: new LogController({ requestIdLogLabel: 'reqId', disableRequestLogging: true }),
    ...(logger === undefined ? {} : { loggerInstance: logger }),
  };
}

/**
 * A request's id and logger (Fastify's `request.log`, carrying `reqId`) are bound just before its
 * handler (domain/shared/request-scope.ts): guards, the handler and the services it calls all run after
 * `preHandler`, and a binding made earlier would be left behind by reading the body.
 */
@Injectable()
export class RequestScopeBinding implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('preHandler', (request, _reply, done) =>
      runInRequest({ id: request.id, log: request.log as Logger }, done),
    );
  }
}

/**
 * Binds each request's id and logger for the code it runs (PinoNestLogger writes through the
 * logger; errors name the id), whether the app logs through pino or elsewhere (tests: none, or their own).
 */
@Module({ providers: [RequestScopeBinding] })
export class LoggingModule {}
