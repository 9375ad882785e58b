import type { LoggerService } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../../src/app.factory.js';
import { configWith } from '../../src/config/config-loader.js';

/** The real application (Fastify, filters, guards, pipes) for one configuration; logs stay quiet. */
export async function createTestApp(overrides: Record<string, unknown> = {}, logger: LoggerService | false = false): Promise<NestFastifyApplication> {
  return createApp(configWith(overrides), { logger });
}
