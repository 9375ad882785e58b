import 'reflect-metadata';
import { resolve } from 'node:path';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';

// This app's settings are its own: Skillhost itself reads no environment variable.
// On Express (Nest's default platform); a message may be up to 100,000 characters, past Express's 100 kB JSON limit.
const app = await NestFactory.create<NestExpressApplication>(
  AppModule.register({
    skillDirectories: [resolve(process.env.SKILLS_DIR ?? '../../skills')],
    model: {
      baseUrl: process.env.MODEL_BASE_URL ?? 'http://127.0.0.1:11434/v1',
      name: process.env.MODEL_NAME ?? 'llama3.1',
      apiKey: process.env.MODEL_API_KEY,
    },
    databaseUrl: process.env.DATABASE_URL,
  }),
  { bodyParser: false },
);
app.useBodyParser('json', { limit: '1mb' });
app.enableShutdownHooks();
await app.listen(Number(process.env.PORT ?? 3001), '127.0.0.1');
console.log(`nest-chat example on ${await app.getUrl()}`);
