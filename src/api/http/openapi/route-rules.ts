import type { INestApplication } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AdminOnly, isPublicRoute } from '../decorators/auth.decorators.js';
import { assertUnreachable, ErrorCode } from '@skillhost/core';
import { controllerRoutes } from '../controller-routes.js';
import { type Feature, RequireFeature } from '../guards/feature.guard.js';
import { NotRateLimited } from '../decorators/rate-limit.decorators.js';
import { declaredErrorCodes } from './api-errors.decorator.js';

/** What the guards know about a route, read from the same metadata they read. */
export interface RouteFacts {
  isPublic: boolean;
  adminOnly: boolean;
  features: Feature[];
  /** Whether `[app.limits]` applies (everything but the health probes). */
  rateLimited: boolean;
  /** The codes its `@ApiErrors` names. */
  declaredCodes: ErrorCode[];
}

/** Whether a route takes a body or a query DTO (both are validated by the global pipe). */
export interface RouteInput {
  body: boolean;
  query: boolean;
}

/**
 * Every code a route can answer: its own, plus those every route of its kind answers. Any route
 * can fail unexpectedly; a keyed route needs a key, and looking the key up needs the database
 * (as do all such routes' own reads); an admin route an admin; validated input can be invalid, a
 * body can be too large; a feature switch can be off; a caller can go over the rate limits.
 */
export function errorCodesOf(route: RouteFacts, input: RouteInput): ErrorCode[] {
  const codes = new Set<ErrorCode>([...route.declaredCodes, ErrorCode.INTERNAL]);
  if (!route.isPublic) {
    codes.add(ErrorCode.UNAUTHENTICATED);
    codes.add(ErrorCode.DATABASE_UNAVAILABLE);
    if (route.adminOnly) codes.add(ErrorCode.FORBIDDEN);
  }
  if (input.body || input.query) codes.add(ErrorCode.VALIDATION_FAILED);
  if (input.body) {
    codes.add(ErrorCode.PAYLOAD_TOO_LARGE);
    codes.add(ErrorCode.REQUEST_TIMEOUT);
  }
  for (const feature of route.features) for (const code of featureDisabledCodes(feature)) codes.add(code);
  if (route.rateLimited) codes.add(ErrorCode.RATE_LIMITED);
  return [...codes];
}

function featureDisabledCodes(feature: Feature): ErrorCode[] {
  switch (feature) {
    case 'skills':
      return [ErrorCode.SKILLS_DISABLED];
    case 'tools':
      return [ErrorCode.TOOLS_DISABLED];
    case 'mcp':
      return [ErrorCode.SKILLS_DISABLED, ErrorCode.MCP_DISABLED];
    case 'gateway':
      return [ErrorCode.GATEWAY_DISABLED];
    default:
      return assertUnreachable(feature);
  }
}

/** The operation id of a controller method, e.g. `Chat_send` (also the document's `operationIdFactory`). */
export function operationIdOf(controllerName: string, methodName: string): string {
  return `${controllerName.replace(/Controller$/, '')}_${methodName}`;
}

/** The facts of every route handler of the application, by operation id. */
export function collectRouteFacts(app: INestApplication): Map<string, RouteFacts> {
  const reflector = new Reflector();
  const facts = new Map<string, RouteFacts>();
  for (const { controller, methodName, handler } of controllerRoutes(app)) {
    const targets = [handler, controller];
    const features = reflector.getAllAndOverride(RequireFeature, targets) ?? [];
    facts.set(operationIdOf(controller.name, methodName), {
      isPublic: isPublicRoute(reflector, handler, controller),
      adminOnly: reflector.getAllAndOverride(AdminOnly, targets) === true,
      features: Array.isArray(features) ? features : [features],
      rateLimited: reflector.getAllAndOverride(NotRateLimited, targets) !== true,
      declaredCodes: declaredErrorCodes(handler as (...args: unknown[]) => unknown),
    });
  }
  return facts;
}
