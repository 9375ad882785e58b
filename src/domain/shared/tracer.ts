import { type Tracer, type TracerProvider, trace } from '@opentelemetry/api';

let cached: { provider: TracerProvider; tracer: Tracer } | undefined;

/**
 * Skillhost's tracer from the provider registered now (the API's no-op one while telemetry is off). Not kept from
 * import time: the API's proxy tracer keeps the first SDK tracer it finds, which is dead once that app closed and
 * unregistered it (tests run several apps in one process); a new registration is a new global provider.
 */
export function currentTracer(): Tracer {
  const provider = trace.getTracerProvider();
  if (cached?.provider !== provider) cached = { provider, tracer: provider.getTracer('skillhost') };
  return cached.tracer;
}
