import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, posix } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { ErrorCode } from '@skillhost/core';

/** The Swagger UI files the page loads, with their types; nothing else is served from the UI's folder. */
const ASSETS: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/**
 * Serves Swagger UI at `uiPath`, reading the document from `documentPath`, on Fastify itself (like
 * the document's route) so neither needs a key. SwaggerModule's own UI serves the whole
 * swagger-ui-dist folder through @fastify/static instead, and there a hostile path
 * (`/docs/../x`, `/docs/%00`) becomes a 403 that the exception filter answers as a logged 500;
 * four known files need no file server.
 */
export function registerSwaggerUi(fastify: FastifyInstance, uiPath: string, documentPath: string, title: string): void {
  const folder = swaggerUiDistFolder();
  // Relative links, so the page also works behind a proxy that mounts the server under a prefix.
  const { html, policy } = swaggerUiPage(
    title,
    `${posix.basename(uiPath)}/`,
    posix.relative(posix.dirname(uiPath), documentPath),
  );
  fastify.get(uiPath, (_request, reply) =>
    reply.type('text/html; charset=utf-8').header('content-security-policy', policy).send(html),
  );
  fastify.get<{ Params: { asset: string } }>(`${uiPath}/:asset`, (request, reply) => {
    const { asset } = request.params;
    const type = Object.hasOwn(ASSETS, asset) ? ASSETS[asset] : undefined;
    if (type === undefined) {
      const body = {
        code: ErrorCode.ROUTE_NOT_FOUND,
        message: `No such file; the UI is at ${uiPath} and the document at ${documentPath}.`,
      };
      return reply.code(404).type('application/json; charset=utf-8').send(JSON.stringify(body));
    }
    return reply
      .type(type)
      .header('cache-control', 'public, max-age=86400')
      .send(createReadStream(join(folder, asset)));
  });
}

/** swagger-ui-dist as @nestjs/swagger resolves it (its dependency, so a version that matches it). */
function swaggerUiDistFolder(): string {
  const swagger = createRequire(import.meta.url).resolve('@nestjs/swagger');
  return dirname(createRequire(swagger).resolve('swagger-ui-dist/package.json'));
}

/**
 * The page, and the Content-Security-Policy it is served with: its own files and its one inline
 * script (by hash) only, the document and "Try it out" requests to this server only, icons from the
 * stylesheet's `data:` URLs, and never inside another site's frame. The validator badge is off: it
 * would send the document's URL to validator.swagger.io.
 */
function swaggerUiPage(title: string, assetBase: string, documentUrl: string): { html: string; policy: string } {
  const start = `window.ui = SwaggerUIBundle({ url: ${JSON.stringify(
    documentUrl,
  )}, dom_id: '#swagger-ui', deepLinking: true, validatorUrl: null });`;
  const policy = [
    "default-src 'none'",
    `script-src 'self' 'sha256-${createHash('sha256').update(start).digest('base64')}'`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  const html = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title}</title>
  <link rel="stylesheet" href="${assetBase}swagger-ui.css">
  <link rel="icon" type="image/png" href="${assetBase}favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="${assetBase}favicon-16x16.png" sizes="16x16">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${assetBase}swagger-ui-bundle.js"></script>
  <script>${start}</script>
</body>
</html>
`;
  return { html, policy };
}
