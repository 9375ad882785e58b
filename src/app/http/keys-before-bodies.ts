import type { INestApplication } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import { AppError, ErrorCode } from '@skillhost/core';
import { bearerChallenge } from '../../api/errors/app-exception.filter.js';
import { type ControllerRoute, controllerRoutes } from '../../api/http/controller-routes.js';
import { isWebSocketUpgrade } from './http-hardening.js';
import { presentedKey } from '../../domain/users/api-key.js';
import { isPublicRoute } from '../../api/http/decorators/auth.decorators.js';
import { AuthService } from '../../domain/users/auth.service.js';
import type { Principal } from '../../domain/users/principal.js';
import type { PrincipalCarrier } from '../../api/http/decorators/request-context.js';

type HookDone = Parameters<onRequestHookHandler>[2];

/**
 * Checks the API key of every route that needs one in an `onRequest` hook, before Fastify reads a
 * byte of the body: a caller without a valid key is answered 401 at once, not after sending (or
 * trickling) a whole body, and holds no connection meanwhile. The principal is left on the request,
 * where the guard (principal.guard.ts) finds it and checks roles as before; with auth off a request
 * without a key passes as `local` and a sent key is still checked, as the guard does.
 *
 * Which routes need a key is the guard's own rule (`isPublicRoute`, from `@Public()`), read for each
 * controller route as Fastify registers it. Routes outside Nest's controllers (the web page, /docs,
 * /openapi.json) need none; `keyedPaths` names the ones that do (`/graphql`, whose resolvers the
 * guard checks one by one). A WebSocket upgrade is left alone: graphql-ws sends its key in
 * `connection_init`, after the upgrade.
 *
 * Call before `app.init()`, which registers the routes.
 */
export function checkKeysBeforeBodies(
  app: INestApplication,
  keyedPaths: readonly string[],
  resourceMetadata?: string,
): void {
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  const auth = app.get(AuthService, { strict: false });
  const reflector = new Reflector();
  const routesByName = controllerRoutesByName(app);
  const unmatched = new Set(routesByName.keys());
  // A callback hook, not an async one: a key whose look-up is cached (nearly every request) is checked without a
  // promise.
  // The callbacks are made only for a look-up that waits: a cached key's request allocates none.
  const refuse = (request: FastifyRequest, reply: FastifyReply, done: HookDone, error: unknown) => {
    if (AppError.isInstance(error) && error.code === ErrorCode.UNAUTHENTICATED)
      challenge(request, reply, error, resourceMetadata);
    done(error as Error);
  };
  const admit = (request: FastifyRequest, done: HookDone, principal: Principal) => {
    (request as PrincipalCarrier).principal = principal;
    done();
  };
  const checkKey: onRequestHookHandler = (request, reply, done) => {
    if (isWebSocketUpgrade(request)) return done();
    let found: Principal | Promise<Principal>;
    try {
      found = auth.authenticateNow(request.headers, request.method);
    } catch (error) {
      return refuse(request, reply, done, error);
    }
    if (found instanceof Promise)
      found.then(
        (principal) => admit(request, done, principal),
        (error: unknown) => refuse(request, reply, done, error),
      );
    else admit(request, done, found);
  };
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const target = routesByName.get(route.handler.name);
    unmatched.delete(route.handler.name);
    const needsKey =
      target === undefined
        ? keyedPaths.includes(route.url ?? '')
        : !isPublicRoute(reflector, target.handler, target.controller);
    if (!needsKey) return;
    const hooks = [route.onRequest ?? []].flat();
    // Fastify registers a GET route's HEAD twin with the GET's options, hooks included.
    if (!hooks.includes(checkKey)) route.onRequest = [...hooks, checkKey];
  });
  // A controller route registered under another name would be left to the guard alone (its key
  // checked only once its body is read): a start-up error, not a silent gap.
  fastify.addHook('onReady', async () => {
    if (unmatched.size > 0)
      throw new Error(
        `The key check before bodies found no route for ${[...unmatched].join(', ')}: Nest no longer names its ` +
          `handlers Controller.method.`,
      );
  });
}

/**
 * Every controller method by the name Nest gives the handler it registers with Fastify
 * (`Controller.method`), with the targets the guard reads. Two controllers of one name would make
 * that name ambiguous, so it stops the start.
 */
function controllerRoutesByName(app: INestApplication): Map<string, ControllerRoute> {
  const routes = new Map<string, ControllerRoute>();
  for (const route of controllerRoutes(app)) {
    const name = `${route.controller.name}.${route.methodName}`;
    if (routes.has(name))
      throw new Error(
        `Two controllers are named ${route.controller.name}: rename one, so that the key check can tell their ` +
          `routes apart.`,
      );
    routes.set(name, route);
  }
  return routes;
}

/**
 * The 401's RFC 6750 challenge, also for routes whose errors another handler answers (mercurius on /graphql). With
 * OAuth on, `/mcp`'s names its protected resource metadata (RFC 9728 §5.1), where MCP clients start their sign-in.
 */
function challenge(request: FastifyRequest, reply: FastifyReply, error: AppError, resourceMetadata?: string): void {
  let value = bearerChallenge(error.message, presentedKey(request.headers) !== undefined);
  if (resourceMetadata !== undefined && request.url.split('?')[0] === '/mcp')
    value += `, resource_metadata="${resourceMetadata}"`;
  void reply.header('www-authenticate', value);
}
