import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  type AuthInfo,
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  type LegacyHttpHandler,
  legacyStatelessFallback,
  type McpHttpHandler,
  type McpServer,
  SUPPORTED_PROTOCOL_VERSIONS,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { Principal } from '../../domain/users/principal.js';
import { AppError, type CatalogueSnapshot, ErrorCode, mcpDisabledError } from '@skillhost/core';
import { APP_CONFIG, type AppConfig, type McpConfig } from '../../config/app-config.js';
import { SkillRegistryService } from '@skillhost/nest';
import { SkillStoreService } from '../../domain/skills/store/skill-store.service.js';
import { McpServerFactory } from './mcp-server.factory.js';
import { SessionEventStore } from './session-event-store.js';

/** A 2025-era client's session: its server, bound to the user who opened it. */
interface Session {
  readonly server: McpServer;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  /** What its notification stream sent, for a client resuming it. */
  readonly events: SessionEventStore;
  readonly userId: string;
  lastSeen: number;
  /** Notification streams (GET) open now: a session listening is not idle. */
  streams: number;
  /** The user's catalogue as the session last heard of it (see `catalogueKey`). */
  catalogue?: string;
}

/** Catalogue swaps that come together (an install, then the store's refresh) are told once. */
const NOTIFY_DEBOUNCE_MS = 100;
/** Idle sessions are looked for this often at most (and twice per idle time, so one outlives it by half at most). */
const SWEEP_INTERVAL_MS = 15_000;

/**
 * The Streamable HTTP side of `/mcp`, for both protocol eras:
 *
 * - 2026-07-28 requests (each carries its own `_meta` envelope) go to the SDK's per-request handler;
 *   their clients hear of changes on `subscriptions/listen` streams, fed through `notify`.
 * - 2025-era clients (today's Claude Code, Codex, Goose) open a session with `initialize`: it keeps
 *   its server and transport, is bound to the user who opened it, and hears of changes on its GET
 *   stream. Sessions are capped per user and per instance, and closed after `session_idle_seconds`
 *   without a request, a notification stream open or not: agents rarely end their sessions (Claude
 *   Code and OpenCode open two a run and leave both; Codex's background process keeps its streams
 *   open after its session is over). A request outside a session (no `initialize`) is answered
 *   statelessly.
 *
 * Every request has already passed the API key guard; the principal travels in `authInfo` to the
 * server factory, which builds that user's catalogue.
 */
@Injectable()
export class McpTransportService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Mcp');
  private readonly config: McpConfig;
  private readonly sessions = new Map<string, Session>();
  private readonly catalogueKeys = new WeakMap<CatalogueSnapshot, string>();
  /** Sessions being opened (initialize sent, id not yet given), by user: they count against the limits. */
  private readonly opening = new Map<string, number>();
  private closing = false;
  private modern: McpHttpHandler | undefined;
  private stateless: LegacyHttpHandler | undefined;
  private stopFollowing: (() => void)[] = [];
  private notifyTimer: NodeJS.Timeout | undefined;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly factory: McpServerFactory,
    private readonly registry: SkillRegistryService,
    private readonly store: SkillStoreService,
    @Inject(APP_CONFIG) private readonly appConfig: AppConfig,
  ) {
    this.config = appConfig.app.mcp;
  }

  onModuleInit(): void {
    if (!this.appConfig.app.skills.enabled || !this.config.enabled) return;
    const build = (context: { authInfo?: AuthInfo }) =>
      this.factory.create(principalOf(context.authInfo), { forOneRequest: true });
    const onerror = (error: Error) => this.logger.debug(`MCP request refused: ${error.message}`);
    this.modern = createMcpHandler(build, { legacy: 'reject', onerror });
    this.stateless = legacyStatelessFallback(build, onerror);
    this.stopFollowing = [
      this.registry.onSwap(() => this.catalogueChanged()),
      this.store.onUserFilterChange((userId) => this.notifySafely(new Set([userId]))),
    ];
    this.sweeper = setInterval(
      () => void this.sweep(),
      Math.min(SWEEP_INTERVAL_MS, (this.config.sessionIdleSeconds * 1000) / 2),
    );
    this.sweeper.unref();
  }

  async onModuleDestroy(): Promise<void> {
    // From here on a request is refused: nothing opened now would be closed.
    this.closing = true;
    for (const stop of this.stopFollowing) stop();
    clearInterval(this.sweeper);
    clearTimeout(this.notifyTimer);
    await Promise.allSettled([...this.sessions.keys()].map((id) => this.close(id)));
    await this.modern?.close();
  }

  /** Open sessions, for the admin view. */
  get openSessions(): number {
    return this.sessions.size;
  }

  /** Answers one HTTP request to `/mcp` for `principal`; `body` is the parsed JSON of a POST. */
  async handle(request: Request, body: unknown, principal: Principal): Promise<Response> {
    if (this.modern === undefined || this.stateless === undefined) throw mcpDisabledError();
    if (this.closing)
      throw new AppError(
        ErrorCode.BUSY,
        'This instance is shutting down; retry, and another instance (or this one, restarted) answers.',
      );
    const authInfo: AuthInfo = {
      token: principal.keyId ?? 'local',
      clientId: principal.userId,
      scopes: [],
      extra: { principal },
    };
    if (!(await isLegacyRequest(request, body))) return this.modern.fetch(request, { authInfo, parsedBody: body });
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId !== null) return this.inSession(sessionId, request, body, principal, authInfo);
    if (request.method === 'POST' && isInitializeRequest(body))
      return this.openSession(request, body, principal, authInfo);
    return this.stateless(request, { authInfo, parsedBody: body });
  }

  private async inSession(
    sessionId: string,
    request: Request,
    body: unknown,
    principal: Principal,
    authInfo: AuthInfo,
  ): Promise<Response> {
    const session = this.sessions.get(sessionId);
    // Another user's session is not found either: its id says nothing to anyone else.
    if (session === undefined || session.userId !== principal.userId) {
      throw new AppError(
        ErrorCode.MCP_SESSION_NOT_FOUND,
        'This MCP session is not open (it closed, idled out, or the server restarted); start a new one with ' +
          'initialize.',
      );
    }
    session.lastSeen = Date.now();
    if (request.method === 'GET') {
      // A session has one notification stream. A client opening another has lost the one it had
      // (the connection dropped where the server could not see it, or the client restarted): the
      // new one replaces it, and with `Last-Event-ID` hears what it missed.
      if (session.streams > 0 && opensStream(request, session.events)) session.transport.closeStandaloneSSEStream();
      session.streams++;
      request.signal.addEventListener('abort', () => session.streams--, { once: true });
    }
    return session.transport.handleRequest(request, { parsedBody: body, authInfo });
  }

  private async openSession(
    request: Request,
    body: unknown,
    principal: Principal,
    authInfo: AuthInfo,
  ): Promise<Response> {
    this.reserve(principal.userId);
    let server: McpServer | undefined;
    let opened = false;
    try {
      server = await this.factory.create(principal);
      const serving = server;
      const events = new SessionEventStore();
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        // Requests are answered as JSON; the session's notifications have its GET stream, and a
        // client reconnecting to it with `Last-Event-ID` is sent those it missed.
        enableJsonResponse: true,
        eventStore: events,
        onsessioninitialized: (id) => {
          opened = true;
          this.sessions.set(id, {
            server: serving,
            transport,
            events,
            userId: principal.userId,
            lastSeen: Date.now(),
            streams: 0,
          });
          this.trim(principal.userId, id);
          void this.catalogueKey(principal.userId).then((key) => {
            const session = this.sessions.get(id);
            if (session !== undefined) session.catalogue ??= key;
          });
        },
        onsessionclosed: (id) => {
          this.sessions.delete(id);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) this.sessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      return await transport.handleRequest(request, { parsedBody: body, authInfo });
    } finally {
      this.release(principal.userId);
      // An initialize the SDK refused opened no session: nothing would ever close its server.
      if (!opened) await server?.close();
    }
  }

  /**
   * Counts a session being opened against the user's and the instance's limits. At a limit, the
   * least recently used session without an open notification stream makes room (of the user's own
   * at theirs): many clients never end their sessions (a restarted agent just opens another), and
   * one that was listening would notice. At the user's limit with every one of theirs listening,
   * their least recently used makes room too, but only once the new session is open (`trim`): an
   * initialize the SDK refuses must not end a working agent's session. A user re-initialising is the
   * one who knows which of their agents is alive. At the instance's limit (counting sessions being
   * opened, each user's at most up to their own limit), 503 BUSY: other users' sessions stay.
   */
  private reserve(userId: string): void {
    const mine = [...this.sessions].filter(([, session]) => session.userId === userId);
    if (mine.length + (this.opening.get(userId) ?? 0) >= this.config.maxSessionsPerUser) this.evictIdlest(mine);
    if (this.sessions.size + this.pendingCount() >= this.config.maxSessions && !this.evictIdlest([...this.sessions])) {
      throw new AppError(
        ErrorCode.BUSY,
        `This instance has ${this.sessions.size} MCP sessions listening for changes, its limit ([app.mcp] ` +
          `max_sessions); retry when one closes.`,
      );
    }
    this.opening.set(userId, (this.opening.get(userId) ?? 0) + 1);
  }

  /** Sessions being opened, each user's counted up to their limit (their excess is trimmed once open). */
  private pendingCount(): number {
    let pending = 0;
    for (const count of this.opening.values()) pending += Math.min(count, this.config.maxSessionsPerUser);
    return pending;
  }

  /**
   * Closes the least recently used of `candidates` without a notification stream open (with `includeListening`, of
   * any), its slot free at once; false when there is none.
   */
  private evictIdlest(candidates: [string, Session][], { includeListening = false } = {}): boolean {
    const idle = candidates
      .filter(([, session]) => includeListening || session.streams === 0)
      .sort(([, a], [, b]) => a.lastSeen - b.lastSeen);
    if (idle.length === 0) return false;
    void this.close(idle[0][0]).catch((error: Error) =>
      this.logger.debug(`An evicted MCP session did not close cleanly: ${error.message}`),
    );
    return true;
  }

  /**
   * Brings the user's sessions back to their limit once `opened` is open (several may have been opened at once), oldest
   * first.
   */
  private trim(userId: string, opened: string): void {
    for (;;) {
      const others = [...this.sessions].filter(([id, session]) => session.userId === userId && id !== opened);
      if (
        others.length < this.config.maxSessionsPerUser ||
        !(this.evictIdlest(others) || this.evictIdlest(others, { includeListening: true }))
      )
        return;
    }
  }

  private release(userId: string): void {
    const left = (this.opening.get(userId) ?? 1) - 1;
    if (left <= 0) this.opening.delete(userId);
    else this.opening.set(userId, left);
  }

  private catalogueChanged(): void {
    clearTimeout(this.notifyTimer);
    this.notifyTimer = setTimeout(() => this.notifySafely(), NOTIFY_DEBOUNCE_MS);
    this.notifyTimer.unref();
  }

  /** A notification that cannot be worked out (the database is down) is logged; the next change tries again. */
  private notifySafely(users?: ReadonlySet<string>): void {
    this.notify(users).catch((error: Error) =>
      this.logger.warn(`MCP clients could not be told of a catalogue change: ${error.message}`),
    );
  }

  /**
   * Tells clients that the skills, the activation tool's enum and the prompts changed. A session hears
   * only when its own user's catalogue changed (of `users`, or of everyone's after a swap).
   * 2026-07-28 clients listen on one stream the SDK keeps for all of them: each hears of every change.
   */
  private async notify(users?: ReadonlySet<string>): Promise<void> {
    this.modern?.notify.resourcesChanged();
    this.modern?.notify.toolsChanged();
    this.modern?.notify.promptsChanged();
    const keys = new Map<string, string>();
    for (const session of [...this.sessions.values()]) {
      if (users !== undefined && !users.has(session.userId)) continue;
      if (!keys.has(session.userId)) keys.set(session.userId, await this.catalogueKey(session.userId));
      const key = keys.get(session.userId)!;
      if (session.catalogue === key || !session.server.isConnected()) continue;
      session.catalogue = key;
      session.server.sendResourceListChanged();
      session.server.sendToolListChanged();
      session.server.sendPromptListChanged();
    }
  }

  /**
   * What a user's clients are shown, as one digest: each skill's name, description and version. Made once per view (a
   * session opens with it, so a client opening one per run would hash the whole catalogue each time).
   */
  private async catalogueKey(userId: string): Promise<string> {
    const view = await this.registry.viewForUser(userId);
    let key = this.catalogueKeys.get(view);
    if (key === undefined) {
      const hash = createHash('sha256');
      for (const skill of view.skills.values())
        hash.update(`${skill.name}\0${skill.description}\0${skill.digest ?? skill.path}\n`);
      key = hash.digest('hex');
      this.catalogueKeys.set(view, key);
    }
    return key;
  }

  private async sweep(): Promise<void> {
    const idleBefore = Date.now() - this.config.sessionIdleSeconds * 1000;
    const idle = [...this.sessions].filter(([, session]) => session.lastSeen < idleBefore).map(([id]) => id);
    await Promise.allSettled(idle.map((id) => this.close(id)));
  }

  private async close(id: string): Promise<void> {
    const session = this.sessions.get(id);
    this.sessions.delete(id);
    await session?.server.close();
  }
}

/**
 * Whether the SDK will open the notification stream this GET asks for: it accepts an event stream,
 * names a protocol version the SDK speaks (if any), and resumes (if at all) from an event the
 * session gave out. Only such a GET replaces the stream open now; a refused one leaves it working.
 */
function opensStream(request: Request, events: SessionEventStore): boolean {
  const version = request.headers.get('mcp-protocol-version');
  const lastEventId = request.headers.get('last-event-id');
  return (
    request.headers.get('accept')?.includes('text/event-stream') === true &&
    (version === null || SUPPORTED_PROTOCOL_VERSIONS.includes(version)) &&
    (lastEventId === null || lastEventId === '' || events.gaveOut(lastEventId))
  );
}

function principalOf(authInfo: AuthInfo | undefined): Principal {
  const principal = authInfo?.extra?.principal as Principal | undefined;
  // The controller always sets it: a server built without it would serve no one's catalogue.
  if (principal === undefined) throw new Error('An MCP server was asked for without the caller');
  return principal;
}
