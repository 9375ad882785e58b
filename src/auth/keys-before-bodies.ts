import type { INestApplication } from '@nestjs/common';
import { METHOD_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import { AppError, ErrorCode } from '../common/app-error.js';
import { bearerChallenge } from '../common/app-exception.filter.js';
import { isWebSocketUpgrade } from '../common/http-hardening.js';
import { presentedKey } from './api-key.js';
import { isPublicRoute } from './auth.decorators.js';
import { AuthService } from './auth.service.js';
import type { PrincipalCarrier } from './request-context.js';

type Handler = (...args: never[]) => unknown;

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
export function checkKeysBeforeBodies(app: INestApplication, keyedPaths: readonly string[]): void {
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  const auth = app.get(AuthService, { strict: false });
  const reflector = new Reflector();
  const controllerRoutes = controllerRoutesByName(app);
  const checkKey: onRequestHookHandler = async (request, reply) => {
    if (isWebSocketUpgrade(request)) return;
    try {
      (request as PrincipalCarrier).principal = await auth.authenticate(request.headers);
    } catch (error) {
      if (error instanceof AppError && error.code === ErrorCode.UNAUTHENTICATED) challenge(request, reply, error);
      throw error;
    }
  };
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const target = controllerRoutes.get(route.handler.name);
    const needsKey = target === undefined ? keyedPaths.includes(route.url ?? '') : !isPublicRoute(reflector, target.handler, target.controller);
    if (!needsKey) return;
    const hooks = [route.onRequest ?? []].flat();
    // Fastify registers a GET route's HEAD twin with the GET's options, hooks included.
    if (!hooks.includes(checkKey)) route.onRequest = [...hooks, checkKey];
  });
}

/**
 * Every controller method by the name Nest gives the handler it registers with Fastify
 * (`Controller.method`), with the targets the guard reads. Two controllers of one name would make
 * that name ambiguous, so it stops the start.
 */
function controllerRoutesByName(app: INestApplication): Map<string, { handler: Handler; controller: abstract new (...args: never[]) => unknown }> {
  const routes = new Map<string, { handler: Handler; controller: abstract new (...args: never[]) => unknown }>();
  const scanner = new MetadataScanner();
  for (const wrapper of new DiscoveryService(app.get(ModulesContainer)).getControllers()) {
    const controller = wrapper.metatype;
    if (typeof controller !== 'function') continue;
    for (const methodName of scanner.getAllMethodNames(controller.prototype)) {
      const handler = (controller.prototype as Record<string, Handler>)[methodName];
      if (Reflect.getMetadata(METHOD_METADATA, handler) === undefined) continue;
      const name = `${wrapper.name}.${methodName}`;
      if (routes.has(name)) throw new Error(`Two controllers are named ${wrapper.name}: rename one, so that the key check can tell their routes apart.`);
      routes.set(name, { handler, controller: controller as abstract new (...args: never[]) => unknown });
    }
  }
  return routes;
}

/** The 401's RFC 6750 challenge, also for routes whose errors another handler answers (mercurius on /graphql). */
function challenge(request: FastifyRequest, reply: FastifyReply, error: AppError): void {
  void reply.header('www-authenticate', bearerChallenge(error.message, presentedKey(request.headers) !== undefined));
}
