import { MercuriusDriver, type MercuriusDriverConfig } from '@nestjs/mercurius';
import type { FastifyInstance } from 'fastify';
import mercurius from 'mercurius';

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
    void app.register(mercurius, mercuriusOptions);
    void app.register(async (instance) => addHooks(instance, hooks ?? {}));
  }
}

function addHooks(instance: FastifyInstance, hooks: Hooks): void {
  for (const [name, hook] of Object.entries(hooks)) {
    for (const fn of Array.isArray(hook) ? hook : [hook]) instance.graphql.addHook(name as never, fn as never);
  }
}
