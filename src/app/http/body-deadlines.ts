import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BODY_RATE_GRACE_MS } from '../../config/config-schema.js';
import { AppError, ErrorCode } from '@skillhost/core';
import { carriesBody } from './http-hardening.js';

/** `[app.http]`: how long a request body may take, and how slowly it may come. */
export interface BodyTimeLimits {
  bodyTimeoutMs: number;
  uploadTimeoutMs: number;
  /** 0: no minimum. */
  bodyMinBytesPerSecond: number;
}

/** The most of a body answered before it was read that is read and dropped: the route's own body limit. */
export interface DropLimits {
  json: number;
  upload: number;
}

/** How often bodies in flight are looked at. */
const SWEEP_MS = 250;

/**
 * Bounds the time a request body may hold its connection, on every route (skill uploads included):
 * a body must arrive whole within `bodyTimeoutMs` (`uploadTimeoutMs` on the upload routes) and,
 * after its first 5 s, at `bodyMinBytesPerSecond` on average. The clock starts when the server
 * starts reading, after the key was checked (keys-before-bodies.ts); time the server spends not
 * reading (a handler busy before it reads an upload) is not held against the client. Past either
 * limit the route answers 408 REQUEST_TIMEOUT and the connection is closed.
 *
 * A body the server answers without reading whole (a 401, 413 or 415 sent first) is still read and
 * dropped under the same limits: a client sending its whole body then reads the answer (closing at
 * once would reset the connection under it), one that trickles is cut off.
 */
export function limitBodyTime(
  fastify: FastifyInstance,
  limits: BodyTimeLimits,
  dropLimits: DropLimits,
  isUpload: (request: FastifyRequest) => boolean,
): void {
  const watch = new BodyWatch(limits.bodyMinBytesPerSecond);
  const deadlineOf = (request: FastifyRequest): Deadline =>
    isUpload(request)
      ? { timeoutMs: limits.uploadTimeoutMs, setting: 'upload_timeout_ms', dropBytes: dropLimits.upload }
      : { timeoutMs: limits.bodyTimeoutMs, setting: 'body_timeout_ms', dropBytes: dropLimits.json };
  fastify.addHook('preParsing', (request, _reply, payload, done) => {
    // A body that came with its head (most JSON bodies, once the key check has awaited) has nothing left to wait for.
    done(null, carriesBody(request) && !request.raw.complete ? watch.read(request.raw, deadlineOf(request)) : payload);
  });
  fastify.addHook('onSend', (request, reply, payload, done) => {
    if (!request.raw.complete) {
      const deadline = deadlineOf(request);
      if (watch.wasCut(request.raw) || Number(request.headers['content-length']) > deadline.dropBytes) {
        // No more than the route takes is read to be dropped: a body announced larger is not read at all.
        void reply.header('connection', 'close');
        if (!watch.wasCut(request.raw)) watch.closeAfter(request.raw, reply.raw);
      } else watch.drop(request.raw, reply.raw, deadline);
    }
    done(null, payload);
  });
}

/** What is known of one body in flight. */
export interface BodyProgress {
  /** Since the server began reading it. */
  elapsedMs: number;
  /** Of that, how long the server was waiting for the client (not busy itself). */
  waitedMs: number;
  /** Bytes received so far. */
  bytes: number;
}

/**
 * Whether a body in flight may go on: `timeout` past its deadline, `slow` under the minimum rate after the grace
 * period.
 */
export function bodyVerdict(
  progress: BodyProgress,
  timeoutMs: number,
  minBytesPerSecond: number,
): 'ok' | 'timeout' | 'slow' {
  if (progress.elapsedMs >= timeoutMs) return 'timeout';
  if (
    minBytesPerSecond > 0 &&
    progress.waitedMs >= BODY_RATE_GRACE_MS &&
    progress.bytes < (minBytesPerSecond * progress.waitedMs) / 1000
  )
    return 'slow';
  return 'ok';
}

interface Deadline {
  timeoutMs: number;
  /** The `[app.http]` key that set it, for the message. */
  setting: string;
  /** Past this many bytes, a body answered before it was read is cut rather than read on. */
  dropBytes: number;
}

interface WatchedBody {
  raw: IncomingMessage;
  stream: CountingStream;
  deadline: Deadline;
  startedAt: number;
  lastLook: number;
  waitedMs: number;
  /** Answered already: the rest is dropped, and a cut closes the connection once the answer is written. */
  answer?: ServerResponse;
}

/** The body's bytes, passed on as they come, counted. */
class CountingStream extends Transform {
  bytes = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    callback(null, chunk);
  }
}

/** The bodies in flight, looked at by one timer that runs only while there are some. */
class BodyWatch {
  private readonly bodies = new Map<IncomingMessage, WatchedBody>();
  private readonly cut = new WeakSet<IncomingMessage>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly minBytesPerSecond: number) {}

  /**
   * The body as a stream that counts its bytes, for Fastify to read instead of `raw`. On a cut it
   * fails with the 408, and `raw` is left unread rather than destroyed: destroying an unfinished
   * request closes its socket before the answer can go out.
   */
  read(raw: IncomingMessage, deadline: Deadline): CountingStream {
    return this.watch(raw, deadline).stream;
  }

  /** The request was answered before its body arrived whole: what is left is read and dropped. */
  drop(raw: IncomingMessage, answer: ServerResponse, deadline: Deadline): void {
    const body = this.bodies.get(raw) ?? this.watch(raw, deadline);
    body.answer = answer;
    body.stream.on('data', () => {
      if (body.stream.bytes > deadline.dropBytes && this.bodies.has(raw)) this.cutOff(body, 'timeout');
    });
    body.stream.resume();
  }

  /** The request was answered before a body too large to drop arrived: its connection closes once the answer is out. */
  closeAfter(raw: IncomingMessage, answer: ServerResponse): void {
    const body = this.bodies.get(raw);
    if (body !== undefined) this.forget(body);
    this.cut.add(raw);
    closeOnceWritten(raw, answer);
  }

  /** Whether this request's body was cut (its answer is the 408). */
  wasCut(raw: IncomingMessage): boolean {
    return this.cut.has(raw);
  }

  private watch(raw: IncomingMessage, deadline: Deadline): WatchedBody {
    const now = Date.now();
    const body: WatchedBody = {
      raw,
      stream: new CountingStream(),
      deadline,
      startedAt: now,
      lastLook: now,
      waitedMs: 0,
    };
    // Whoever reads the body hears of a cut; once they stopped listening it must not crash the process.
    body.stream.on('error', () => undefined);
    raw.on('error', (error) => body.stream.destroy(error));
    body.stream.once('close', () => this.forget(body));
    raw.pipe(body.stream);
    this.bodies.set(raw, body);
    this.timer ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
    return body;
  }

  private sweep(): void {
    const now = Date.now();
    for (const body of this.bodies.values()) {
      if (body.raw.complete) {
        this.forget(body);
        continue;
      }
      // Bytes waiting on the server's side: the server is the slow one for now.
      if (body.raw.readableLength === 0 && body.stream.readableLength === 0) body.waitedMs += now - body.lastLook;
      body.lastLook = now;
      const verdict = bodyVerdict(
        { elapsedMs: now - body.startedAt, waitedMs: body.waitedMs, bytes: body.stream.bytes },
        body.deadline.timeoutMs,
        this.minBytesPerSecond,
      );
      if (verdict !== 'ok') this.cutOff(body, verdict);
    }
  }

  private cutOff(body: WatchedBody, verdict: 'timeout' | 'slow'): void {
    this.forget(body);
    this.cut.add(body.raw);
    body.raw.unpipe(body.stream);
    if (body.answer !== undefined) {
      closeOnceWritten(body.raw, body.answer);
      return;
    }
    const message =
      verdict === 'timeout'
        ? `The request body did not arrive whole within ${body.deadline.timeoutMs / 1000} s ([app.http] ` +
          `${body.deadline.setting}); nothing was done. Send it again over a faster connection.`
        : `The request body came at under ${this.minBytesPerSecond} bytes a second ([app.http] ` +
          `body_min_bytes_per_second); nothing was done. Send it again over a faster connection.`;
    body.stream.destroy(new AppError(ErrorCode.REQUEST_TIMEOUT, message));
  }

  private forget(body: WatchedBody): void {
    this.bodies.delete(body.raw);
    if (this.bodies.size === 0 && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

/** Closes the request's connection once its answer has been written (at once if it has). */
function closeOnceWritten(raw: IncomingMessage, answer: ServerResponse): void {
  const close = () => raw.socket.destroy();
  if (answer.writableFinished) close();
  else answer.once('finish', close);
}
