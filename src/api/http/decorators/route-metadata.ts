import type { ReflectableDecorator, Reflector } from '@nestjs/core';

/** A handler or its class, as the reflector takes them. */
export type RouteTarget = Parameters<Reflector['getAllAndOverride']>[1][number];

const remembered = new WeakMap<RouteTarget, WeakMap<RouteTarget, Map<unknown, unknown>>>();

/**
 * A decorator's value on a route or resolver (its handler's, else its class's), as `getAllAndOverride` reads it, but
 * read once per route: decorators are fixed when classes are defined, and the guards ask every request the same few
 * questions of its route. Keyed by handler and class together, since a subclass inherits a handler, not its class's
 * decorators.
 */
export function routeMetadata<P, T>(
  reflector: Reflector,
  decorator: ReflectableDecorator<P, T>,
  handler: RouteTarget,
  owner: RouteTarget,
): T | undefined {
  let byHandler = remembered.get(owner);
  if (byHandler === undefined) remembered.set(owner, (byHandler = new WeakMap()));
  let values = byHandler.get(handler);
  if (values === undefined) byHandler.set(handler, (values = new Map()));
  if (values.has(decorator)) return values.get(decorator) as T | undefined;
  const value = reflector.getAllAndOverride(decorator, [handler, owner]) as T | undefined;
  values.set(decorator, value);
  return value;
}
