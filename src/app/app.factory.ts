import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module.js';
import { AuthService } from '../domain/users/auth.service.js';
import { checkKeysBeforeBodies } from './http/keys-before-bodies.js';
import { ErrorCode } from '@skillhost/core';
import { answerClientError, hardenHttp } from './http/http-hardening.js';
import { limitBodyTime } from './http/body-deadlines.js';
import { SKILL_UPLOAD_ROUTES } from '../api/http/skill-store.controller.js';
import { acceptSkillUploads } from './http/upload-bodies.js';
import { uploadKindOf } from '../domain/skills/store/skill-upload.reader.js';
import type { AppConfig } from '../config/app-config.js';
import type { ProcessRole } from '../config/process-role.js';
import { GRAPHQL_PATH } from '../api/graphql/graphql-driver.config.js';
import { GATEWAY_PATH } from '../api/gateway/gateway.controller.js';
import { createAppLogger, fastifyLoggingOptions } from '../infra/observability/logging.js';
import { PinoNestLogger } from '../infra/observability/nest-logger.js';
import { setupOpenApi } from '../api/http/openapi/openapi.js';
import { registerWebPage } from '../api/http/web-page.js';
import { OAuthServerService } from '../api/oauth/oauth-server.service.js';
import { OAuthInteractions } from '../api/oauth/oauth-interactions.js';
import { RateLimitsService } from '../domain/limits/rate-limits.service.js';
import { registerOAuthRoutes } from '../api/oauth/oauth-routes.js';
import { LifecycleService } from '../domain/lifecycle/lifecycle.service.js';
import { TurnGate } from '../domain/lifecycle/turn-gate.service.js';

/** Request bodies larger than this are refused with 413 PAYLOAD_TOO_LARGE before any parsing. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface CreateAppOptions {
  /**
   * Where Nest's logs go: absent, pino as `[app.logging]` says (with a request log); `false`, nowhere; or a logger of
   * one's own.
   */
  logger?: LoggerService | false;
  /** pino's output instead of stdout (tests read the lines). */
  logDestination?: DestinationStream;
  /** Which process of the server this is: a cluster's worker skips what the primary did (default: the only one). */
  role?: ProcessRole;
}

/** Builds the Fastify-backed Nest application (main.ts, tests and benchmarks share it). */
export async function createApp(config: AppConfig, options: CreateAppOptions = {}): Promise<NestFastifyApplication> {
  const pino =
    options.logger === undefined
      ? createAppLogger(config.app.logging, options.logDestination, options.role?.worker)
      : undefined;
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forConfig(config, options.role),
    new FastifyAdapter({
      ...fastifyLoggingOptions(pino),
      bodyLimit: BODY_LIMIT_BYTES,
      // No Express-style middleware anywhere (Fastify hooks do that work): without @fastify/middie no request
      // walks an empty middleware chain.
      skipMiddie: true,
      // Errors Fastify raises before routing (a malformed URL) get the same {code, message} shape.
      frameworkErrors: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
        const problem = `url: ${error.message}`;
        void reply
          .code(400)
          .header('content-type', 'application/json; charset=utf-8')
          .send(
            JSON.stringify({
              code: ErrorCode.VALIDATION_FAILED,
              message: `Invalid request: ${error.message}`,
              details: { problems: [problem] },
            }),
          );
      },
      // Requests Node's parser refuses (headers over 16 KiB, a malformed request line) too.
      clientErrorHandler: answerClientError,
    }),
    // No form parser: hardenHttp installs the only body parser (JSON).
    // With pino, what Nest logs before the logger exists is kept and written through it.
    { logger: options.logger, bufferLogs: pino !== undefined, abortOnError: false, bodyParser: false },
  );
  if (pino !== undefined) app.useLogger(new PinoNestLogger(pino));
  hardenHttp(app, config, app.get(AuthService, { strict: false }).mode);
  acceptSkillUploads(app.getHttpAdapter().getInstance(), SKILL_UPLOAD_ROUTES);
  const oauth = config.app.auth.oauth.enabled ? app.get(OAuthServerService) : undefined;
  checkKeysBeforeBodies(app, [GRAPHQL_PATH], oauth?.addresses.resourceMetadata);
  allowGatewayBodies(app.getHttpAdapter().getInstance(), config.app.gateway.maxBodyBytes);
  limitBodyTime(
    app.getHttpAdapter().getInstance(),
    config.app.http,
    { json: BODY_LIMIT_BYTES, upload: config.app.skills.maxInstallBytes },
    (request) => uploadKindOf(request.headers['content-type']) !== undefined,
  );
  // No Nest shutdown hooks: main.ts owns SIGTERM/SIGINT and runs closeGracefully.
  closeConnectionsWhileStopping(app);
  setupOpenApi(app);
  registerWebPage(app.getHttpAdapter().getInstance());
  if (oauth !== undefined)
    registerOAuthRoutes(
      app.getHttpAdapter().getInstance(),
      oauth,
      app.get(OAuthInteractions),
      app.get(RateLimitsService),
    );
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}

/** The gateway's routes read bodies up to `[app.gateway] max_body_bytes`: agents resend whole histories. */
function allowGatewayBodies(fastify: FastifyInstance, maxBodyBytes: number): void {
  fastify.addHook('onRoute', (route) => {
    if (route.url?.startsWith(`/${GATEWAY_PATH}/`)) route.bodyLimit = maxBodyBytes;
  });
}

/** How long answers already on their way (and other short requests) get before every connection is cut. */
const ANSWER_FLUSH_MS = 2000;

/**
 * The orderly stop main.ts runs on SIGTERM/SIGINT: stop accepting connections and report
 * not-ready; refuse new turns (503 BUSY); let the turns in flight (JSON and SSE) be answered and
 * stored for up to `graceMs`; then close the app (the pool, then the embedded PostgreSQL).
 *
 * Turns still running after `graceMs`, or once `hurry` settles (a second signal), are cut: their
 * connections are reset and the database pool closes at once, so a cut turn stores nothing (unless
 * its one atomic write had already begun). Returns how many turns were cut.
 */
export async function closeGracefully(
  app: NestFastifyApplication,
  graceMs: number,
  hurry?: Promise<unknown>,
): Promise<number> {
  const lifecycle = app.get(LifecycleService);
  const turns = app.get(TurnGate);
  const server = app.getHttpServer() as Server;
  lifecycle.beginShutdown();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  // Keep-alive connections with nothing in flight are closed now and whenever they fall idle.
  server.closeIdleConnections();
  const sweeper = setInterval(() => server.closeIdleConnections(), 100);
  try {
    const finished = await turns.whenIdle(graceMs, hurry);
    const cut = finished ? 0 : turns.inFlight;
    if (!finished) {
      lifecycle.cutTurns();
      server.closeAllConnections();
    }
    await Promise.race([closed, sleep(ANSWER_FLUSH_MS, undefined, { ref: false })]);
    server.closeAllConnections();
    await app.close();
    return cut;
  } finally {
    clearInterval(sweeper);
  }
}

/** Once shutdown began, every answer asks its client to close the connection (and go elsewhere). */
function closeConnectionsWhileStopping(app: NestFastifyApplication): void {
  const lifecycle = app.get(LifecycleService);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onSend', (_request, reply, payload, done) => {
      if (lifecycle.isShuttingDown) void reply.header('connection', 'close');
      done(null, payload);
    });
}
