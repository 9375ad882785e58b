import 'reflect-metadata';
import { resolve } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module.js';

// This app's settings are its own: Skillhost itself reads no environment variable.
const app = await NestFactory.create<NestFastifyApplication>(
  AppModule.register({
    skillDirectories: [resolve(process.env.SKILLS_DIR ?? '../../skills')],
    model: { baseUrl: process.env.MODEL_BASE_URL ?? 'http://127.0.0.1:11434/v1', name: process.env.MODEL_NAME ?? 'llama3.1', apiKey: process.env.MODEL_API_KEY },
    databaseUrl: process.env.DATABASE_URL,
  }),
  new FastifyAdapter(),
);
app.enableShutdownHooks();
await app.listen(Number(process.env.PORT ?? 3001), '127.0.0.1');
console.log(`nest-chat example on ${await app.getUrl()}`);
