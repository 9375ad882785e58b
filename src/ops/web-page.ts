import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { ErrorCode } from '../common/app-error.js';

/**
 * The web chat page (`web/`, built into `dist/web` by `npm run build`): `/` and the files it loads,
 * served on Fastify itself without a key (the page asks for one when the API wants it). Only the
 * files the build wrote are served, each by its known name, so no path reaches a file server.
 */
export function registerWebPage(fastify: FastifyInstance): void {
  const folder = webFolder();
  if (folder === undefined) return;
  const files = new Map<string, { file: string; type: string }>([
    ['/', { file: join(folder, 'index.html'), type: 'text/html; charset=utf-8' }],
    ['/styles.css', { file: join(folder, 'styles.css'), type: 'text/css; charset=utf-8' }],
  ]);
  for (const name of readdirSync(join(folder, 'app'))) {
    if (name.endsWith('.js')) files.set(`/app/${name}`, { file: join(folder, 'app', name), type: 'text/javascript; charset=utf-8' });
  }
  const serve = (path: string) => (_request: unknown, reply: { type(type: string): typeof reply; header(name: string, value: string): typeof reply; send(body: unknown): unknown }) => {
    const known = files.get(path)!;
    return reply
      .type(known.type)
      .header('cache-control', 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
      .send(createReadStream(known.file));
  };
  for (const path of files.keys()) fastify.get(path, serve(path));
  fastify.get<{ Params: { name: string } }>('/app/:name', (request, reply) => {
    const body = { code: ErrorCode.ROUTE_NOT_FOUND, message: `No such file of the web page: ${request.params.name}.` };
    return reply.code(404).type('application/json; charset=utf-8').send(JSON.stringify(body));
  });
}

/** `dist/web`, found from this file (`dist/src/ops` built, `src/ops` in development and tests); undefined before a build. */
function webFolder(): string | undefined {
  let folder = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    for (const candidate of [join(folder, 'web'), join(folder, 'dist', 'web')]) {
      if (existsSync(join(candidate, 'index.html')) && existsSync(join(candidate, 'app'))) return candidate;
    }
    folder = dirname(folder);
  }
  return undefined;
}
