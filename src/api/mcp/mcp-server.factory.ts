import { Inject, Injectable, Logger } from '@nestjs/common';
import { z } from 'zod';
import {
  type JSONRPCRequest,
  type ListResourcesResult,
  McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type Result,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { SKILLS_LIST_METHOD, type SkillSource, SkillsExtension } from '@modelcontextprotocol/server/ext/skills';
import type { Principal } from '../../domain/users/principal.js';
import { runSkillTool, type ToolExecution } from '@skillhost/ai-sdk';
import {
  AppError,
  type CatalogueSnapshot,
  chooseCatalogue,
  type ErrorCode,
  inputJsonSchema,
  type SkillRecord,
  type SkillTool,
  type ToolContext,
} from '@skillhost/core';
import { packageVersion } from '../../config/package-version.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { SkillSearchService } from '../../domain/skills/ranking/skill-search.service.js';
import { SkillRegistryService, SkillResourcesService } from '@skillhost/nest';
import { withBoundedIssues } from './bounded-params.js';
import { MCP_ACTIVATE_TOOL, MCP_SEARCH_TOOL, mcpInstructions, mcpTools } from './mcp-tools.js';
import {
  PAGES_PER_VIEW,
  type PublishedPage,
  PublishedSkillsService,
  recordsAfter,
} from './published-skills.service.js';
import { mimeTypeOf, parseSkillUri, skillFileUri } from './skill-uri.js';
import { SKILL_USAGE_RECORDER, type UsageRecorder } from '../../domain/skills/usage/skill-usage.js';
import { callerSkills, callUsageEvents } from '../../domain/skills/usage/turn-usage.js';
import { ViewCache } from './view-cache.js';

const PROMPT_ARGUMENT = 'request';

/*
 * Params are checked with these (the SDK's three-argument handlers), so a malformed request is
 * -32602 Invalid params, as the specification asks, not an internal error; its message names ten
 * problems at most.
 */
const LIST_PARAMS = withBoundedIssues(z.looseObject({ cursor: z.string().optional() }));
const CALL_PARAMS = withBoundedIssues(
  z.looseObject({ name: z.string(), arguments: z.record(z.string(), z.unknown()).optional() }),
);
const PROMPT_PARAMS = withBoundedIssues(
  z.looseObject({ name: z.string(), arguments: z.record(z.string(), z.string()).optional() }),
);

/**
 * Builds the MCP server one caller talks to: the skills of that user's catalogue (shared skills and
 * their personal ones, their filter applied, as a new chat of theirs would have), read afresh on
 * every request so a session sees a reload at once. Three ways in, over the same reads:
 *
 * - the MCP Skills extension (`skills/list`, `skills/get`, `skill://` resources, directory reads),
 *   served by the SDK's `SkillsExtension` over this catalogue;
 * - for clients without the extension (every agent today), the tools of `mcp-tools.ts`: the
 *   catalogue in `activate_team_skill`'s description and in the instructions, `read_skill_file`, and
 *   `search_skills` while the catalogue is partial; `resources/list` names every file, for clients
 *   that read only resources listed there;
 * - one prompt per skill, so a client that maps prompts to slash commands offers `/skill-name`.
 *
 * Tools and prompts are answered by handlers that read the catalogue per call, rather than
 * registered one by one, so building a server costs the same for ten skills as for ten thousand.
 */
@Injectable()
export class McpServerFactory {
  private readonly logger = new Logger('Mcp');
  private readonly version: string;

  /** What each view lists to clients (see `listing`). */
  private readonly listings = new WeakMap<CatalogueSnapshot, Listing>();
  /** `skills/list` answers as the SDK made and checked them, by view, protocol version and cursor. */
  private readonly skillsLists = new ViewCache<Listed>(PAGES_PER_VIEW);
  /** `resources/list` answers by view and cursor. */
  private readonly resourceLists = new ViewCache<ReturnType<typeof resourcePage>>(PAGES_PER_VIEW);
  /** The view a `skills/list` request is answered from, by its context (see `rememberSkillsList`). */
  private readonly listingFor = new WeakMap<ServerContext, Listed>();

  constructor(
    private readonly registry: SkillRegistryService,
    private readonly resources: SkillResourcesService,
    private readonly published: PublishedSkillsService,
    private readonly searching: SkillSearchService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SKILL_USAGE_RECORDER) private readonly usage: UsageRecorder,
  ) {
    this.version = packageVersion();
  }

  /**
   * The server for `principal`. One made for a single request (`forOneRequest`: a 2026-07-28 request, or a 2025 one
   * outside a session) reads the user's view once, as it starts; a session's reads it on every request, so it sees a
   * reload or a filter change at once.
   */
  async create(principal: Principal, { forOneRequest = false } = {}): Promise<McpServer> {
    const read = () => this.registry.viewForUser(principal.userId);
    const first = await read();
    const view = forOneRequest ? () => Promise.resolve(first) : read;
    const { instructions } = this.listing(first);
    const mcp = new McpServer({ name: 'skillhost', title: 'Skillhost', version: this.version }, { instructions });
    new SkillsExtension({
      source: this.skillSource(view),
      cacheHint: { ttlMs: this.config.app.mcp.cacheTtlMs, cacheScope: 'private' },
      onWarning: (warning) => this.logger.warn(`${warning.path}: ${warning.message}`),
    }).attach(mcp);
    this.rememberSkillsList(mcp.server, view);
    mcp.server.registerCapabilities({
      resources: { listChanged: true },
      tools: { listChanged: true },
      prompts: { listChanged: true },
    });
    this.serveResourceList(mcp.server, view);
    this.serveTools(mcp.server, view);
    this.servePrompts(mcp.server, view);
    return mcp;
  }

  /**
   * The skills a view lists to a client, in `[app.mcp]`'s budget: all of them in name order (the
   * same bytes on every listing while nothing changes, so a client's prompt cache holds) when they
   * fit; otherwise the team's most used, then the rest in name order, whole entries only, and a
   * note pointing to `search_skills`. With the instructions and the tools that carry it, made once
   * per view (a 2026-07-28 client's every request builds a server), ranked by the team's use as it
   * was then: the listing changes only with the catalogue, which clients hear of (`list_changed`).
   */
  private listing(view: CatalogueSnapshot): Listing {
    const known = this.listings.get(view);
    if (known !== undefined) return known;
    const popularity = this.searching.popularity;
    const { catalogueBudgetTokens, catalogueMaxSkills, instructionsMaxChars } = this.config.app.mcp;
    const catalogue = chooseCatalogue(
      view,
      { budgetTokens: catalogueBudgetTokens, maxSkills: catalogueMaxSkills, format: 'markdown' },
      { message: '', popularity, searchable: true, searchToolName: MCP_SEARCH_TOOL, fill: true, hideLocations: true },
    );
    const tools = mcpTools(view, catalogue, this.config.app.skills.searchTool === 'always');
    const listing: Listing = {
      instructions: mcpInstructions(catalogue, instructionsMaxChars),
      offered: catalogue.listed,
      tools,
      listed: tools.map((tool) => ({
        name: tool.wireName,
        title: tool.annotations.title,
        description: tool.description,
        inputSchema: inputJsonSchema(tool) as { type: 'object' },
        annotations: tool.annotations,
      })),
    };
    this.listings.set(view, listing);
    return listing;
  }

  /** The extension's methods over the user's catalogue; pages are cursors over skill names. */
  private skillSource(view: () => Promise<CatalogueSnapshot>): SkillSource {
    const pageSize = this.config.app.mcp.pageSize;
    return {
      list: async ({ cursor }, ctx) => {
        const listed = this.listingFor.get(ctx);
        const page = await this.published.page(listed?.view ?? (await view()), decodeCursor(cursor), pageSize);
        if (listed !== undefined && !page.lasting) listed.lasting = false;
        return {
          skills: page.skills.map((skill) => skill.entry),
          ...(page.next === undefined ? {} : { nextCursor: encodeCursor(page.next) }),
        };
      },
      // `skills/get` is an entry of the listing (frontmatter, file digests), no instructions: not an activation.
      get: async (uri) => (await this.published.skillAt(await view(), uri))?.entry,
      read: async (uri) => {
        const snapshot = await view();
        const file = await readOrUndefined(async () => this.published.file(snapshot, uri));
        if (file === undefined) return undefined;
        this.recordRead(snapshot, uri);
        return file.isText
          ? { text: file.bytes.toString('utf8'), mimeType: file.mimeType }
          : { bytes: file.bytes, mimeType: file.mimeType };
      },
      readDirectory: async (uri, { cursor }) => {
        const children = await this.published.directory(await view(), uri);
        if (children === undefined) return undefined;
        const start = decodeOffset(cursor);
        const page = children.slice(start, start + pageSize);
        return {
          resources: page,
          ...(start + pageSize < children.length ? { nextCursor: encodeCursor(String(start + pageSize)) } : {}),
        };
      },
    };
  }

  /**
   * Answers `skills/list` from the answers the SDK's own handler made before, per view, protocol version (which
   * decides the cache fields) and cursor: the extension checks every entry of a page against the specification each
   * time it lists it, which cost a walk of 2,000 skills most of its time (bench/results/mcp.md), though a view's
   * entries never change. The first request for a page goes through the SDK's handler as before (its params check,
   * its entry check, its warnings), on the view this request saw; later ones get that answer. A reload or a filter
   * change gives the next request another view, whose pages are made afresh.
   */
  private rememberSkillsList(server: Server, view: () => Promise<CatalogueSnapshot>): void {
    // The handler the extension registered; `_getRequestHandler` is the SDK's own hook for subclasses (pinned SDK).
    const sdkList = (server as unknown as HandlerLookup)._getRequestHandler(SKILLS_LIST_METHOD);
    if (sdkList === undefined) throw new Error(`The MCP Skills extension registered no ${SKILLS_LIST_METHOD} handler`);
    server.removeRequestHandler(SKILLS_LIST_METHOD);
    server.setRequestHandler(SKILLS_LIST_METHOD, { params: LIST_PARAMS }, async (params, ctx) => {
      const snapshot = await view();
      // No cursor is the first page; an empty one is a cursor the SDK's handler refuses, never that page.
      const key = JSON.stringify([server.getNegotiatedProtocolVersion() ?? null, params.cursor ?? null]);
      const made = await this.skillsLists.get(
        snapshot,
        key,
        async () => {
          const listed: Listed = { view: snapshot, lasting: true };
          this.listingFor.set(ctx, listed);
          const request = { jsonrpc: '2.0' as const, id: ctx.mcpReq.id, method: SKILLS_LIST_METHOD, params };
          listed.result = await sdkList(request, ctx);
          return listed;
        },
        (listed) => listed.lasting,
      );
      return made.result as Result;
    });
  }

  /**
   * `resources/list`, paged as `skills/list` is (`page_size` skills a page, cursor the last name):
   * every file of every published skill, with its MIME type and size. Some clients (Gemini CLI)
   * read only resources listed here; the `skill://{+path}` template serves the rest. A page's answer is made once per
   * view and cursor, as `skills/list`'s is.
   */
  private serveResourceList(server: Server, view: () => Promise<CatalogueSnapshot>): void {
    const pageSize = this.config.app.mcp.pageSize;
    server.removeRequestHandler('resources/list');
    server.setRequestHandler('resources/list', { params: LIST_PARAMS }, async (params) => {
      const snapshot = await view();
      const after = decodeCursor(params.cursor);
      const listed = await this.resourceLists.get(
        snapshot,
        after ?? '',
        async () => resourcePage(await this.published.page(snapshot, after, pageSize)),
        (made) => made.lasting,
      );
      return listed.answer;
    });
  }

  /**
   * The tools of `mcp-tools.ts`, run as a chat runs them: a failure is a result the model reads (naming the skills that
   * exist).
   */
  private serveTools(server: Server, view: () => Promise<CatalogueSnapshot>): void {
    server.setRequestHandler('tools/list', { params: LIST_PARAMS }, async () => {
      const snapshot = await view();
      const listing = this.listing(snapshot);
      this.usage.record(
        listing.offered.map((skill) => ({ skill, version: versionIn(snapshot, skill), counter: 'offered' })),
      );
      return { tools: [...listing.listed] };
    });
    server.setRequestHandler('tools/call', { params: CALL_PARAMS }, async (params) => {
      const snapshot = await view();
      const { tools } = this.listing(snapshot);
      const tool = tools.find((candidate) => candidate.wireName === params.name);
      if (tool === undefined)
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `Unknown tool '${params.name}'; this server offers ${tools.map((t) => t.wireName).join(', ')}.`,
        );
      const execution = await runSkillTool(tool, params.arguments ?? {}, this.toolContext(snapshot));
      this.recordCall(snapshot, execution);
      const { card } = execution;
      return {
        content: [{ type: 'text' as const, text: card.output }],
        ...(card.status === 'error' ? { isError: true } : {}),
      };
    });
  }

  /** A tool call in the usage funnel: an activation counts as `mcp`. MCP has no model and no turns. */
  private recordCall(snapshot: CatalogueSnapshot, execution: ToolExecution): void {
    this.usage.record(callUsageEvents(execution, 'mcp', callerSkills(snapshot)));
  }

  /** A `skill://` read in the usage funnel: SKILL.md is the extension's activation, any other file a resource read. */
  private recordRead(snapshot: CatalogueSnapshot, uri: string): void {
    const parsed = parseSkillUri(uri);
    if (parsed === undefined || !snapshot.skills.has(parsed.name)) return;
    const counter = parsed.path === 'SKILL.md' ? 'activatedMcp' : 'resourcesRead';
    this.usage.record([{ skill: parsed.name, version: versionIn(snapshot, parsed.name), counter }]);
  }

  private toolContext(snapshot: CatalogueSnapshot): ToolContext {
    const reader = this.resources.reader({ snapshot });
    return {
      resources: reader,
      registry: reader,
      snapshot,
      search: (query, limit) => this.searching.search(snapshot, query, limit),
      useSkillThreshold: this.config.app.tools.useSkillThreshold,
    };
  }

  /**
   * One prompt per skill, which clients offer as a slash command. Its one argument is required:
   * Gemini CLI fills only required arguments from the words typed after the command (all of them,
   * joined, when there is one), OpenCode gives the last argument the rest of the text, and Claude
   * Code gives each argument one word (its model sees the whole text beside the prompt anyway).
   * The message names the skill and the tool that activates it, and quotes the request; it holds
   * no text of the skill's: OpenCode runs `!`…`` in a prompt's text as a shell command and fills
   * `$1`…, so a skill's body there would run on the user's machine. For the same reason the usage funnel does not
   * count a `prompts/get`: the activation it asks for counts once, as `mcp`, when the model calls the tool.
   */
  private servePrompts(server: Server, view: () => Promise<CatalogueSnapshot>): void {
    const pageSize = this.config.app.mcp.pageSize;
    server.setRequestHandler('prompts/list', { params: LIST_PARAMS }, async (params) => {
      const skills: SkillRecord[] = [];
      for (const skill of recordsAfter(await view(), decodeCursor(params.cursor))) {
        skills.push(skill);
        if (skills.length > pageSize) break;
      }
      const page = skills.slice(0, pageSize);
      return {
        prompts: page.map((skill) => ({
          name: skill.name,
          description: skill.description,
          arguments: [
            { name: PROMPT_ARGUMENT, description: 'What to do with the skill, in your words.', required: true },
          ],
        })),
        ...(skills.length > pageSize ? { nextCursor: encodeCursor(page[page.length - 1].name) } : {}),
      };
    });
    server.setRequestHandler('prompts/get', { params: PROMPT_PARAMS }, async (params) => {
      const snapshot = await view();
      const skill = snapshot.skills.get(params.name);
      if (skill === undefined)
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `No prompt named '${params.name}': prompts are the skills of your catalogue.`,
        );
      // Only a skill that activates now (its SKILL.md inside its folder, readable) is a prompt that works.
      try {
        await this.resources.reader({ snapshot }).activate(skill.name);
      } catch (error) {
        throw protocolErrorOf(error);
      }
      const wanted = params.arguments?.[PROMPT_ARGUMENT]?.trim() ?? '';
      return {
        description: skill.description,
        messages: [{ role: 'user', content: { type: 'text', text: promptText(skill.name, wanted) } }],
      };
    });
  }
}

/** What a skill's prompt asks of the model: the activation, then the user's request (or to ask for one). */
export function promptText(name: string, request: string): string {
  const activate =
    `First call the ${MCP_ACTIVATE_TOOL} tool with {"name": ` + `"${name}"} and follow the instructions it returns.`;
  return request === ''
    ? `Use the skill "${name}". ${activate} Then ask me what to do with it, unless that is clear already.`
    : `Use the skill "${name}" for my request. ${activate}\n\nMy request: ${request}`;
}

/** The version a view serves a skill at ('' in the funnel when it has none). */
function versionIn(snapshot: CatalogueSnapshot, skill: string): string | undefined {
  return snapshot.skills.get(skill)?.digest;
}

/** `resources/list`'s answer for one page of published skills: every file of each. */
function resourcePage(page: PublishedPage): { answer: ListResourcesResult; lasting: boolean } {
  const resources = page.skills.flatMap(({ record, files }) =>
    [...files.values()].map((file) => ({
      uri: skillFileUri(record.name, file.path),
      name: `${record.name}/${file.path}`,
      title: file.path === 'SKILL.md' ? `${record.name} (skill)` : `${file.path} of the skill ${record.name}`,
      ...(file.path === 'SKILL.md' ? { description: record.description } : {}),
      mimeType: mimeTypeOf(file.path),
      size: file.size,
    })),
  );
  return {
    answer: { resources, ...(page.next === undefined ? {} : { nextCursor: encodeCursor(page.next) }) },
    lasting: page.lasting,
  };
}

/** A `skills/list` answer and the view it was made from. */
interface Listed {
  readonly view: CatalogueSnapshot;
  /** False when a skill of the page was left out for a reason that may pass: the answer is not remembered. */
  lasting: boolean;
  result?: Result;
}

/** The SDK's protected lookup of a registered request handler. */
interface HandlerLookup {
  _getRequestHandler(method: string): ((request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>) | undefined;
}

/** What a view lists to MCP clients, made once per view. */
interface Listing {
  readonly instructions: string;
  /** The skills the listing names (the usage funnel's `offered` at each `tools/list`). */
  readonly offered: readonly string[];
  readonly tools: readonly SkillTool[];
  /** The `tools/list` answer's entries. */
  readonly listed: readonly {
    name: string;
    title: string;
    description: string;
    inputSchema: { type: 'object' };
    annotations: SkillTool['annotations'];
  }[];
}

/**
 * A file the user may not read (a path that leads out of the skill, a file gone since the listing)
 * is no resource of theirs: undefined, which the SDK answers -32602. Anything else (the database
 * down while a store skill is unpacked) is the server's failure, -32603 with its code.
 */
async function readOrUndefined<T>(read: () => Promise<T | undefined>): Promise<T | undefined> {
  try {
    return await read();
  } catch (error) {
    if (AppError.isInstance(error) && isNotTheirs(error.code)) return undefined;
    throw protocolErrorOf(error);
  }
}

/** What the caller asked for does not exist for them: the codes MCP answers -32602. */
function isNotTheirs(code: ErrorCode): boolean {
  return code.startsWith('SKILL_') || code.startsWith('RESOURCE_');
}

/**
 * A domain error as a JSON-RPC error: -32602 for what is not the caller's, -32603 for the server's failures, the code
 * in `data`.
 */
function protocolErrorOf(error: unknown): unknown {
  if (!AppError.isInstance(error)) return error;
  return new ProtocolError(
    isNotTheirs(error.code) ? ProtocolErrorCode.InvalidParams : ProtocolErrorCode.InternalError,
    `[${error.code}] ${error.message}`,
    { code: error.code },
  );
}

/** Cursors are opaque to clients: the last name (or offset) of the page, base64url. */
function encodeCursor(value: string): string {
  return Buffer.from(value, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const value = Buffer.from(cursor, 'base64url').toString('utf8');
  if (value === '' || encodeCursor(value) !== cursor)
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      'Invalid cursor: pass the nextCursor of the previous page unchanged.',
    );
  return value;
}

function decodeOffset(cursor: string | undefined): number {
  const value = decodeCursor(cursor);
  if (value === undefined) return 0;
  const offset = Number(value);
  if (!Number.isSafeInteger(offset) || offset < 0)
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      'Invalid cursor: pass the nextCursor of the previous page unchanged.',
    );
  return offset;
}
