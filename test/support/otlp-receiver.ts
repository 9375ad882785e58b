import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An OTLP attribute value in the JSON encoding (ints may come as strings). */
interface AnyValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
}

interface KeyValue {
  key: string;
  value: AnyValue;
}

/** A span as the receiver got it, its attributes made plain. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
  /** The resource's attributes (`service.name`…). */
  resource: Record<string, unknown>;
}

/** A data point of a sum (a counter) as received. */
export interface ReceivedSumPoint {
  metric: string;
  attributes: Record<string, unknown>;
  value: number;
}

function plain(value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(plain);
  return undefined;
}

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, plain(value)]));
}

/**
 * A collector's OTLP/HTTP receiver on 127.0.0.1, JSON encoding only (what the exporters send): it keeps the spans and
 * the counters' points it is sent, and every request's path and content type.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly sums: ReceivedSumPoint[] = [];
  /** Every request's path, content type and headers (names lower-cased, as Node gives them). */
  readonly requests: { path: string; contentType: string | undefined; headers: Record<string, unknown> }[] = [];
  private server: Server | undefined;
  /** A hosted collector's key check: a request without this header's value is refused with 401, unread. */
  private required: { name: string; value: string } | undefined;

  /** From now on, refuses (401) every request whose header `name` is not `value`. */
  requireHeader(name: string, value: string): this {
    this.required = { name: name.toLowerCase(), value };
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.requests.push({ path: req.url ?? '', contentType: req.headers['content-type'], headers: req.headers });
        if (this.required !== undefined && req.headers[this.required.name] !== this.required.value) {
          res.writeHead(401, { 'content-type': 'application/json' }).end('{"message":"unauthorized"}');
          return;
        }
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        if (req.url === '/v1/traces') this.takeSpans(body);
        else if (req.url === '/v1/metrics') this.takeMetrics(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  /** Forgets what it received (between tests that share it). */
  reset(): void {
    this.required = undefined;
    this.spans.length = 0;
    this.sums.length = 0;
    this.requests.length = 0;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  /**
   * A counter's total over its series whose attributes include `attributes`. Sums are cumulative: each series' last
   * point counts.
   */
  sumOf(metric: string, attributes: Record<string, unknown>): number {
    const last = new Map<string, number>();
    for (const p of this.sums)
      if (p.metric === metric && Object.entries(attributes).every(([k, v]) => p.attributes[k] === v))
        last.set(JSON.stringify(p.attributes), p.value);
    return [...last.values()].reduce((total, value) => total + value, 0);
  }

  private takeSpans(body: Record<string, unknown>): void {
    type Body = {
      resourceSpans?: {
        resource?: { attributes?: KeyValue[] };
        scopeSpans?: { spans?: (Omit<ReceivedSpan, 'attributes' | 'resource'> & { attributes?: KeyValue[] })[] }[];
      }[];
    };
    for (const resourceSpans of (body as Body).resourceSpans ?? []) {
      const resource = attributesOf(resourceSpans.resource?.attributes);
      for (const scope of resourceSpans.scopeSpans ?? [])
        for (const span of scope.spans ?? [])
          this.spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes as unknown as KeyValue[]),
            status: span.status ?? {},
            resource,
          });
    }
  }

  private takeMetrics(body: Record<string, unknown>): void {
    type Point = { attributes?: KeyValue[]; asInt?: number | string; asDouble?: number };
    type Body = {
      resourceMetrics?: { scopeMetrics?: { metrics?: { name: string; sum?: { dataPoints?: Point[] } }[] }[] }[];
    };
    for (const resource of (body as Body).resourceMetrics ?? [])
      for (const scope of resource.scopeMetrics ?? [])
        for (const metric of scope.metrics ?? [])
          for (const point of metric.sum?.dataPoints ?? [])
            this.sums.push({
              metric: metric.name,
              attributes: attributesOf(point.attributes),
              value: Number(point.asInt ?? point.asDouble ?? 0),
            });
  }
}
