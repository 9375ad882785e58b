import { randomUUID } from 'node:crypto';
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
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import type { Principal } from '../auth/principal.js';
import { AppError, ErrorCode } from '../common/app-error.js';
import { APP_CONFIG, type AppConfig, type McpConfig } from '../config/app-config.js';
import { SkillRegistryService } from '../skills/skill-registry.service.js';
import { McpServerFactory } from './mcp-server.factory.js';

/** A 2025-era client's session: its server, bound to the user who opened it. */
interface Session {
  readonly server: McpServer;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly userId: string;
  lastSeen: number;
  /** Notification streams (GET) open now: a session listening is not idle. */
  streams: number;
}

/** Catalogue swaps that come together (an install, then the store's refresh) are told once. */
const NOTIFY_DEBOUNCE_MS = 100;
const SWEEP_INTERVAL_MS = 15_000;

/**
 * The Streamable HTTP side of `/mcp`, for both protocol eras:
 *
 * - 2026-07-28 requests (each carries its own `_meta` envelope) go to the SDK's per-request handler;
 *   their clients hear of changes on `subscriptions/listen` streams, fed through `notify`.
 * - 2025-era clients (today's Claude Code, Codex, Goose) open a session with `initialize`: it keeps
 *   its server and transport, is bound to the user who opened it, and hears of changes on its GET
 *   stream. Sessions are capped per instance and closed after `session_idle_seconds` without a
 *   request (one holding a notification stream open is not idle). A request outside a session
 *   (no `initialize`) is answered statelessly.
 *
 * Every request has already passed the API key guard; the principal travels in `authInfo` to the
 * server factory, which builds that user's catalogue.
 */
@Injectable()
export class McpTransportService implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Mcp');
  private readonly config: McpConfig;
  private readonly sessions = new Map<string, Session>();
  private modern: McpHttpHandler | undefined;
  private stateless: LegacyHttpHandler | undefined;
  private stopFollowing: (() => void) | undefined;
  private notifyTimer: NodeJS.Timeout | undefined;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly factory: McpServerFactory,
    private readonly registry: SkillRegistryService,
    @Inject(APP_CONFIG) private readonly appConfig: AppConfig,
  ) {
    this.config = appConfig.app.mcp;
  }

  onModuleInit(): void {
    if (!this.appConfig.app.skills.enabled || !this.config.enabled) return;
    const build = (context: { authInfo?: AuthInfo }) => this.factory.create(principalOf(context.authInfo));
    const onerror = (error: Error) => this.logger.debug(`MCP request refused: ${error.message}`);
    this.modern = createMcpHandler(build, { legacy: 'reject', onerror });
    this.stateless = legacyStatelessFallback(build, onerror);
    this.stopFollowing = this.registry.onSwap(() => this.catalogueChanged());
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopFollowing?.();
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
    if (this.modern === undefined || this.stateless === undefined) throw new AppError(ErrorCode.MCP_DISABLED, 'Skills are not served over MCP on this server (app.mcp.enabled = false).');
    const authInfo: AuthInfo = { token: principal.keyId ?? 'local', clientId: principal.userId, scopes: [], extra: { principal } };
    if (!(await isLegacyRequest(request, body))) return this.modern.fetch(request, { authInfo, parsedBody: body });
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId !== null) return this.inSession(sessionId, request, body, principal, authInfo);
    if (request.method === 'POST' && isInitializeRequest(body)) return this.openSession(request, body, principal, authInfo);
    return this.stateless(request, { authInfo, parsedBody: body });
  }

  private async inSession(sessionId: string, request: Request, body: unknown, principal: Principal, authInfo: AuthInfo): Promise<Response> {
    const session = this.sessions.get(sessionId);
    // Another user's session is not found either: its id says nothing to anyone else.
    if (session === undefined || session.userId !== principal.userId) {
      throw new AppError(ErrorCode.MCP_SESSION_NOT_FOUND, 'This MCP session is not open (it closed, idled out, or the server restarted); start a new one with initialize.');
    }
    session.lastSeen = Date.now();
    if (request.method === 'GET') {
      session.streams++;
      request.signal.addEventListener('abort', () => session.streams--, { once: true });
    }
    return session.transport.handleRequest(request, { parsedBody: body, authInfo });
  }

  private async openSession(request: Request, body: unknown, principal: Principal, authInfo: AuthInfo): Promise<Response> {
    if (this.sessions.size >= this.config.maxSessions) {
      throw new AppError(ErrorCode.BUSY, `This instance has ${this.sessions.size} open MCP sessions, its limit ([app.mcp] max_sessions); retry when one closes.`);
    }
    const server = this.factory.create(principal);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        this.sessions.set(id, { server, transport, userId: principal.userId, lastSeen: Date.now(), streams: 0 });
      },
      onsessionclosed: (id) => {
        this.sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) this.sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    return transport.handleRequest(request, { parsedBody: body, authInfo });
  }

  private catalogueChanged(): void {
    clearTimeout(this.notifyTimer);
    this.notifyTimer = setTimeout(() => this.notifyAll(), NOTIFY_DEBOUNCE_MS);
    this.notifyTimer.unref();
  }

  /** Every client hears that the skills, the activate_skill enum and the prompts may have changed. */
  private notifyAll(): void {
    this.modern?.notify.resourcesChanged();
    this.modern?.notify.toolsChanged();
    this.modern?.notify.promptsChanged();
    for (const [id, session] of this.sessions) {
      if (!session.server.isConnected()) continue;
      try {
        session.server.sendResourceListChanged();
        session.server.sendToolListChanged();
        session.server.sendPromptListChanged();
      } catch (error) {
        this.logger.debug(`Session ${id} could not be told of a change: ${(error as Error).message}`);
      }
    }
  }

  private async sweep(): Promise<void> {
    const idleBefore = Date.now() - this.config.sessionIdleSeconds * 1000;
    const idle = [...this.sessions].filter(([, session]) => session.streams === 0 && session.lastSeen < idleBefore).map(([id]) => id);
    await Promise.allSettled(idle.map((id) => this.close(id)));
  }

  private async close(id: string): Promise<void> {
    const session = this.sessions.get(id);
    this.sessions.delete(id);
    await session?.server.close();
  }
}

function principalOf(authInfo: AuthInfo | undefined): Principal {
  const principal = authInfo?.extra?.principal as Principal | undefined;
  // The controller always sets it: a server built without it would serve no one's catalogue.
  if (principal === undefined) throw new Error('An MCP server was asked for without the caller');
  return principal;
}
