import type { INestApplication } from '@nestjs/common';
import { METHOD_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryService, MetadataScanner, ModulesContainer } from '@nestjs/core';

export type RouteHandler = (...args: never[]) => unknown;
export type ControllerClass = abstract new (...args: never[]) => unknown;

/** One route handler of a controller: what guards and decorators read their metadata from. */
export interface ControllerRoute {
  controller: ControllerClass;
  methodName: string;
  handler: RouteHandler;
}

/**
 * Every route handler of the application's controllers (a method with an HTTP method decorator),
 * for what must know each route's metadata before a request comes: the key check before bodies and
 * the OpenAPI document's rules.
 */
export function* controllerRoutes(app: INestApplication): Generator<ControllerRoute> {
  const scanner = new MetadataScanner();
  for (const { metatype } of new DiscoveryService(app.get(ModulesContainer)).getControllers()) {
    if (typeof metatype !== 'function') continue;
    for (const methodName of scanner.getAllMethodNames(metatype.prototype)) {
      const handler = (metatype.prototype as Record<string, RouteHandler>)[methodName];
      if (Reflect.getMetadata(METHOD_METADATA, handler) === undefined) continue;
      yield { controller: metatype as ControllerClass, methodName, handler };
    }
  }
}
