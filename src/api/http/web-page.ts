import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';
import { ErrorCode } from '@skillhost/core';
import { packageRoot } from '../../config/package-version.js';

/**
 * The web chat page (`web/`, built into `dist/web` by `npm run build`): `/` and the files it loads
 * (its scripts in `app/`, the Markdown renderer and sanitiser in `vendor/`), served on Fastify
 * itself without a key (the page asks for one when the API wants it). Only the files the build
 * wrote are served, each by its known name, so no path reaches a file server.
 */
export function registerWebPage(fastify: FastifyInstance): void {
  const root = packageRoot();
  const folder = root === undefined ? undefined : join(root, 'dist', 'web');
  if (folder === undefined || !existsSync(join(folder, 'index.html')) || !existsSync(join(folder, 'app'))) {
    new Logger('WebPage').warn(
      `The web chat page is not built (no ${folder ?? 'dist/web'}): / answers 404 until \`npm run build\` builds it.`,
    );
    return;
  }
  const files = new Map<string, { file: string; type: string }>([
    ['/', { file: join(folder, 'index.html'), type: 'text/html; charset=utf-8' }],
    ['/styles.css', { file: join(folder, 'styles.css'), type: 'text/css; charset=utf-8' }],
  ]);
  for (const scripts of SCRIPT_FOLDERS) {
    if (!existsSync(join(folder, scripts))) continue;
    for (const name of readdirSync(join(folder, scripts))) {
      if (name.endsWith('.js'))
        files.set(`/${scripts}/${name}`, { file: join(folder, scripts, name), type: 'text/javascript; charset=utf-8' });
    }
  }
  const serve =
    (path: string) =>
    (
      _request: unknown,
      reply: {
        type(type: string): typeof reply;
        header(name: string, value: string): typeof reply;
        send(body: unknown): unknown;
      },
    ) => {
      const known = files.get(path)!;
      return reply
        .type(known.type)
        .header('cache-control', 'no-cache')
        .header(
          'content-security-policy',
          "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; " +
            "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
        )
        .send(createReadStream(known.file));
    };
  for (const path of files.keys()) fastify.get(path, serve(path));
  for (const scripts of SCRIPT_FOLDERS) {
    fastify.get<{ Params: { name: string } }>(`/${scripts}/:name`, (request, reply) => {
      const body = {
        code: ErrorCode.ROUTE_NOT_FOUND,
        message: `No such file of the web page: ${request.params.name}. The page is at /.`,
      };
      return reply.code(404).type('application/json; charset=utf-8').send(JSON.stringify(body));
    });
  }
}

/** The folders of dist/web whose scripts are served: the page's own, and the packages it imports. */
const SCRIPT_FOLDERS = ['app', 'vendor'] as const;
