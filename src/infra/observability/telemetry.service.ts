import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Inject,
  Injectable,
  Logger,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
  Optional,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import {
  context,
  diag,
  type DiagLogger,
  DiagLogLevel,
  metrics,
  propagation,
  ROOT_CONTEXT,
  trace,
} from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import { APP_CONFIG, type AppConfig, type TelemetryConfig } from '../../config/app-config.js';
import { packageVersion } from '../../config/package-version.js';

/**
 * How long closing waits for the last export: a collector that is down is retried for up to 10 s by the exporters, and
 * a stopping server should not wait for it (what is not sent by then is dropped).
 */
const FLUSH_ON_CLOSE_MS = 2000;

/** `[app.telemetry]`, as the loader resolved it (an empty endpoint: off). */
export type TelemetrySettings = Pick<
  TelemetryConfig,
  'endpoint' | 'serviceName' | 'metricsIntervalMs' | 'sampleRatio' | 'exportHeaders' | 'acceptTraceContext'
>;

/** A started SDK: `shutdown` sends what is still buffered, then unregisters it. */
interface StartedTelemetry {
  shutdown(): Promise<void>;
}

/**
 * OpenTelemetry for this process when `[app.telemetry] endpoint` is set: the SDK's tracer and meter providers,
 * registered globally (the domain and the adapters speak only `@opentelemetry/api`), exporting over OTLP/HTTP (JSON)
 * in batches. Off, none of the SDK is imported and every span and counter is the API's no-op. Closing the app sends
 * what is buffered (spans, and a last collection of the metrics).
 */
@Injectable()
export class TelemetryService implements OnApplicationShutdown {
  private constructor(private readonly started: StartedTelemetry | undefined) {}

  static async start(settings: TelemetrySettings): Promise<TelemetryService> {
    if (settings.endpoint === '') return new TelemetryService(undefined);
    return new TelemetryService(await startSdk(settings, new Logger('Telemetry')));
  }

  /** Whether the SDK was started (the endpoint was set). */
  get enabled(): boolean {
    return this.started !== undefined;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.started?.shutdown();
  }
}

async function startSdk(settings: TelemetrySettings, logger: Logger): Promise<StartedTelemetry> {
  // Imported here, not at the top: with telemetry off the SDK is never loaded.
  const [traceSdk, { OTLPTraceExporter }, metricsSdk, { OTLPMetricExporter }, { resourceFromAttributes }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/sdk-metrics'),
      import('@opentelemetry/exporter-metrics-otlp-http'),
      import('@opentelemetry/resources'),
    ]);
  const resource = resourceFromAttributes({
    'service.name': settings.serviceName,
    'service.version': packageVersion(),
    'service.instance.id': randomUUID(),
  });
  // The SDK adds the OTEL_EXPORTER_OTLP_HEADERS variables' headers to these; a header named in both is ours.
  const headers = { ...settings.exportHeaders };
  const tracerProvider = new traceSdk.NodeTracerProvider({
    resource,
    // A turn's root span draws by its trace id; every span under it follows its parent, so a trace is whole or absent.
    sampler: new traceSdk.ParentBasedSampler({ root: new traceSdk.TraceIdRatioBasedSampler(settings.sampleRatio) }),
    spanProcessors: [
      new traceSdk.BatchSpanProcessor(new OTLPTraceExporter({ url: `${settings.endpoint}/v1/traces`, headers })),
    ],
  });
  const meterProvider = new metricsSdk.MeterProvider({
    resource,
    readers: [
      new metricsSdk.PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: `${settings.endpoint}/v1/metrics`, headers }),
        exportIntervalMillis: settings.metricsIntervalMs,
        // The SDK refuses a time-out longer than the interval.
        exportTimeoutMillis: Math.min(settings.metricsIntervalMs, 30_000),
      }),
    ],
  });
  // The SDK reports failed exports through `diag`, silent unless given a logger.
  diag.setLogger(diagLogger(logger), DiagLogLevel.WARN);
  // The async-local-storage context manager and W3C propagation with it: a span started in a callback has its parent.
  tracerProvider.register();
  if (!metrics.setGlobalMeterProvider(meterProvider))
    logger.warn('Another OpenTelemetry meter provider is registered in this process; metrics go to that one');
  logger.log(exportingLine(settings));
  return {
    async shutdown() {
      const flushed = await Promise.race([
        Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()]).then(([spans]) => {
          // The metrics' failure goes through `diag`; the spans' last batch fails only here.
          if (spans.status === 'rejected')
            logger.warn(`The last spans could not be sent: ${messageOf(spans.reason)}; they are dropped`);
          return true;
        }),
        sleep(FLUSH_ON_CLOSE_MS, false, { ref: false }),
      ]);
      if (!flushed)
        logger.warn(
          `The last export to ${new URL(settings.endpoint).host} did not finish within ${FLUSH_ON_CLOSE_MS} ms ` +
            '(is the collector up?); the spans and metrics not yet sent are dropped',
        );
      trace.disable();
      metrics.disable();
      context.disable();
      propagation.disable();
      diag.disable();
    },
  };
}

/**
 * What the log says at start: where to, which share of the turns, which headers (their names: values may be secrets).
 */
function exportingLine(settings: TelemetrySettings): string {
  const names = Object.keys(settings.exportHeaders);
  return (
    `Exporting traces (${
      Math.round(settings.sampleRatio * 10_000) / 100
    }% of the turns) and metrics over OTLP/HTTP to ` +
    `${new URL(settings.endpoint).host}${names.length === 0 ? '' : ` with the headers ${names.join(', ')}`}`
  );
}

/**
 * An error's message; the SDK hands some failures (a refused export: 401, 403…) to `diag` as the error serialised in
 * JSON with its stack, of which the message is what a person needs.
 */
function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  const text = String(error);
  if (!text.startsWith('{')) return text;
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    return typeof parsed.message === 'string' ? parsed.message : text;
  } catch {
    return text;
  }
}

function diagLogger(logger: Logger): DiagLogger {
  const line = (message: string, args: unknown[]) => [message, ...args].map(messageOf).join(' ');
  return {
    error: (message, ...args) => logger.warn(line(message, args)),
    warn: (message, ...args) => logger.warn(line(message, args)),
    info: () => undefined,
    debug: () => undefined,
    verbose: () => undefined,
  };
}

/**
 * `[app.telemetry] accept_trace_context`: each HTTP request runs in the context its `traceparent` header carries, so a
 * turn it starts is a child of the caller's span. Set once the body is read (`preValidation`): a context set before it
 * would be lost to the body stream's own.
 */
@Injectable()
export class IncomingTraceContext implements OnModuleInit {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly telemetry: TelemetryService,
    @Optional() private readonly adapterHost?: HttpAdapterHost,
  ) {}

  /** Before `ready()`: Fastify gives every route the hooks its instance has by then. */
  onModuleInit(): void {
    const fastify = this.adapterHost?.httpAdapter?.getInstance<FastifyInstance>();
    if (!this.telemetry.enabled || !this.config.app.telemetry.acceptTraceContext || fastify === undefined) return;
    fastify.addHook('preValidation', (request, _reply, done) =>
      context.with(propagation.extract(ROOT_CONTEXT, request.headers), done),
    );
  }
}

/** The SDK's life follows the app's: started before the first turn, flushed and stopped when the app closes. */
@Module({
  providers: [
    {
      provide: TelemetryService,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => TelemetryService.start(config.app.telemetry),
    },
    IncomingTraceContext,
  ],
  exports: [TelemetryService],
})
export class TelemetryModule {}
