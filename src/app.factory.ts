import { Logger, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module.js';
import { ErrorCode } from './common/app-error.js';
import type { AppConfig } from './config/app-config.js';
import { setupOpenApi } from './openapi/openapi.js';

/** Request bodies larger than this are refused with 413 PAYLOAD_TOO_LARGE before any parsing. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/** Builds the Fastify-backed Nest application (main.ts, tests and benchmarks share it). */
export async function createApp(config: AppConfig, options: { logger?: LoggerService | false } = {}): Promise<NestFastifyApplication> {
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forConfig(config),
    new FastifyAdapter({
      bodyLimit: BODY_LIMIT_BYTES,
      // Errors Fastify raises before routing (a malformed URL) get the same {code, message} shape.
      frameworkErrors: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
        void reply
          .code(400)
          .header('content-type', 'application/json; charset=utf-8')
          .send(JSON.stringify({ code: ErrorCode.VALIDATION_FAILED, message: `Invalid request: ${error.message}` }));
      },
    }),
    { logger: options.logger ?? new Logger(), abortOnError: false },
  );
  app.enableShutdownHooks();
  setupOpenApi(app);
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
  return app;
}
