import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { REQUESTS_LIMIT } from '../../domain/limits/rate-limit-store.js';
import type { RateLimitsService } from '../../domain/limits/rate-limits.service.js';
import { SCOPES } from '../../domain/users/scopes.js';
import type { OAuthInteractions } from './oauth-interactions.js';
import { INTERACTION_PATH, type OAuthServerService } from './oauth-server.service.js';

/** The discovery documents MCP clients read (RFC 9728 and RFC 8414), besides the provider's own routes. */
export const PROTECTED_RESOURCE_PATHS = [
  '/.well-known/oauth-protected-resource',
  '/.well-known/oauth-protected-resource/mcp',
];

/**
 * Mounts the OAuth server in Fastify: the protected resource metadata, the authorization server metadata (the
 * provider's discovery document, also at RFC 8414's `/.well-known/oauth-authorization-server`), the provider's
 * routes under `/oauth/` and the interaction pages. The provider and the pages read their own bodies (forms, JSON
 * registrations): their requests are handed over raw in `onRequest`, before Fastify's JSON-only parser.
 */
export function registerOAuthRoutes(
  fastify: FastifyInstance,
  server: OAuthServerService,
  interactions: OAuthInteractions,
  limits: RateLimitsService,
): void {
  const { issuer, resource } = server.addresses;
  const metadata = JSON.stringify({
    resource,
    authorization_servers: [issuer],
    scopes_supported: SCOPES,
    bearer_methods_supported: ['header'],
    resource_name: 'Skillhost',
    resource_documentation: `${issuer}/docs`,
  });
  for (const url of PROTECTED_RESOURCE_PATHS)
    fastify.get(url, (_request: FastifyRequest, reply: FastifyReply) =>
      reply
        .header('content-type', 'application/json; charset=utf-8')
        .header('access-control-allow-origin', '*')
        .header('cache-control', 'public, max-age=300')
        .send(metadata),
    );
  // The provider is built when the app starts (its keys come from the database): its handler is made on first use.
  let handler: ReturnType<OAuthServerService['oidc']['callback']> | undefined;
  // Answered here, never passed on: the hook does not call `_done`, so no parser or handler runs after it.
  const toProvider = (request: FastifyRequest, reply: FastifyReply, _done: () => void) => {
    void reply.hijack();
    const path = request.raw.url ?? '/';
    // Outside Nest's guards, so limited here: every write (registration, tokens, revocation, the sign-in and consent
    // forms) counts against the client address's `requests_per_minute`, as a request without a key does elsewhere.
    if (request.method === 'POST') {
      const verdict = limits.hit(REQUESTS_LIMIT, `ip:${request.ip}`);
      if (verdict instanceof Promise)
        void verdict.then(
          (answer) => (answer.allowed ? pass(request, reply, path) : refuse(reply, answer.retryAfterMs)),
          () => pass(request, reply, path),
        );
      else if (verdict.allowed) pass(request, reply, path);
      else refuse(reply, verdict.retryAfterMs);
      return;
    }
    pass(request, reply, path);
  };
  const pass = (request: FastifyRequest, reply: FastifyReply, path: string) => {
    if (path.startsWith(`${INTERACTION_PATH}/`)) {
      void interactions.handle(request.raw, reply.raw);
      return;
    }
    // RFC 8414's location and OpenID's are one document: the provider serves the second.
    if (path.split('?')[0] === '/.well-known/oauth-authorization-server')
      request.raw.url = '/.well-known/openid-configuration';
    (handler ??= server.oidc.callback())(request.raw, reply.raw);
  };
  // The JSON-only rule (http-hardening.ts) lets these routes read their own bodies: forms, and registrations.
  const answerFromHook = { handler: () => undefined, onRequest: toProvider, config: { readsItsOwnBody: true } };
  for (const url of ['/oauth/*', '/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'])
    fastify.route({ method: ['GET', 'POST', 'OPTIONS', 'DELETE', 'PUT'], url, ...answerFromHook });
}

/** RFC 6749's error shape, with the status and `Retry-After` every other limited route answers. */
function refuse(reply: FastifyReply, retryAfterMs: number): void {
  const retryAfter = Math.max(1, Math.ceil(retryAfterMs / 1000));
  reply.raw.writeHead(429, { 'content-type': 'application/json; charset=utf-8', 'retry-after': String(retryAfter) });
  reply.raw.end(
    JSON.stringify({
      error: 'rate_limited',
      error_description: `Too many requests from this address; try again in ${retryAfter} s.`,
    }),
  );
}
