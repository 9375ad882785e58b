import { MercuriusDriver, type MercuriusDriverConfig } from '@nestjs/mercurius';
import fastifyWebsocket, { type WebSocket } from '@fastify/websocket';
import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import mercurius from 'mercurius';
import { throttled } from '../../domain/shared/log-throttle.js';

/** The largest graphql-ws message a client may send (mercurius's own limit, kept). */
const MAX_SUBSCRIPTION_MESSAGE_BYTES = 1024 * 1024;

const warnBrokenSocket = throttled((message) => new Logger('GraphQL').warn(message));

/**
 * A WebSocket whose client broke the protocol (a message over the limit, a malformed frame, a reset)
 * is closed, and said at warn, at most once a minute: anyone can open one, so none of this may
 * fill the log (the default handler logs each at error, with its stack).
 */
function dropBrokenSocket(error: Error, socket: WebSocket, request: FastifyRequest): void {
  // The upgrade request's logger: the line carries its request id, and goes to this app's log.
  warnBrokenSocket(`A GraphQL WebSocket was closed: ${error.message}`, (message) =>
    request.log.warn({ context: 'GraphQL' }, message),
  );
  socket.terminate();
}

type Hooks = NonNullable<MercuriusDriverConfig['hooks']>;

/**
 * MercuriusDriver, registering mercurius without making Fastify load its plugins there and then.
 *
 * The stock driver awaits `register(mercurius)` in onModuleInit. Awaiting makes Fastify build the
 * routes Nest has declared so far, and a route keeps the error handler in force when it is built;
 * Nest installs its own only after onModuleInit, so the REST routes would answer Fastify's own
 * errors (malformed JSON, a body over the limit) in Fastify's shape instead of `{code, message}`.
 * Here mercurius is queued and loads with everything else at `ready()`, and its hooks are added by
 * a plugin queued after it. (The stock driver's `plugins` and `definitions` options and its
 * resolver request hooks are not used by this app, so not carried over.)
 */
export class DeferredMercuriusDriver extends MercuriusDriver {
  override async start(options: MercuriusDriverConfig): Promise<void> {
    const { plugins: _plugins, hooks, definitions: _definitions, ...mercuriusOptions } = options;
    const app = this.httpAdapterHost.httpAdapter.getInstance<FastifyInstance>();
    // mercurius's own WebSocket server, with an error handler: what a client does wrong on its
    // socket (a frame over the limit, a broken frame) is the client's doing, not the server's error.
    void app.register(fastifyWebsocket, {
      options: { maxPayload: MAX_SUBSCRIPTION_MESSAGE_BYTES },
      errorHandler: dropBrokenSocket,
    });
    void app.register(mercurius, mercuriusOptions);
    void app.register(async (instance) => addHooks(instance, hooks ?? {}));
  }
}

function addHooks(instance: FastifyInstance, hooks: Hooks): void {
  for (const [name, hook] of Object.entries(hooks)) {
    for (const fn of Array.isArray(hook) ? hook : [hook]) instance.graphql.addHook(name as never, fn as never);
  }
}
