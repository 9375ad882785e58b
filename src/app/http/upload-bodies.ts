import type { FastifyInstance, FastifyRequest } from 'fastify';
import { carriesBody, unsupportedBody } from './http-hardening.js';
import { UPLOAD_MEDIA_TYPES } from '../../domain/skills/store/skill-upload.reader.js';

/**
 * Lets the skill upload routes take a zip, tar(.gz) or multipart body as the raw request stream,
 * for `readSkillUpload` to read. Every other route keeps answering 415 UNSUPPORTED_MEDIA_TYPE for
 * those types, in the same words as for any other non-JSON body. Fastify's `bodyLimit` does not
 * apply to a stream handed through: `readSkillUpload`'s own caps are what bound it.
 *
 * Call it on the root instance AFTER `hardenHttp` (its `acceptJsonBodiesOnly` removes every
 * content-type parser, these too) and before `app.init()`, with the upload routes as Fastify
 * knows them (the full URL pattern, with any global prefix):
 *
 *   hardenHttp(app, config, authMode);
 *   acceptSkillUploads(app.getHttpAdapter().getInstance(), [
 *     { method: 'POST', url: '/v1/admin/skills' },
 *     { method: 'POST', url: '/v1/skills' },
 *   ]);
 *
 * The handler then finds the stream as the body:
 * `readSkillUpload(request.body as Readable, request.headers['content-type'] ?? '', limits)`.
 */
export function acceptSkillUploads(fastify: FastifyInstance, routes: { method: string; url: string }[]): void {
  const uploadRoutes = new Set(routes.map(({ method, url }) => routeKey(method, url)));
  const uploadTypes = new Set(UPLOAD_MEDIA_TYPES);
  fastify.addContentTypeParser([...UPLOAD_MEDIA_TYPES], (_request, payload, done) => done(null, payload));
  fastify.addHook('onRequest', (request, _reply, done) => {
    // Most requests carry no body: nothing to refuse, and no route options to look up (Fastify builds them anew).
    if (!carriesBody(request) || isUploadRoute(request, uploadRoutes)) return done();
    done(
      unsupportedBody(
        request,
        (mediaType) => !uploadTypes.has(mediaType) && request.server.hasContentTypeParser(mediaType),
      ),
    );
  });
}

function isUploadRoute(request: FastifyRequest, uploadRoutes: ReadonlySet<string>): boolean {
  const url = request.routeOptions.url;
  return url !== undefined && uploadRoutes.has(routeKey(request.method, url));
}

function routeKey(method: string, url: string): string {
  return `${method.toUpperCase()} ${url}`;
}
