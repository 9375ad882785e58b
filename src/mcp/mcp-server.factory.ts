import { Inject, Injectable, Logger } from '@nestjs/common';
import { z } from 'zod';
import { McpServer, ProtocolError, ProtocolErrorCode, type Server } from '@modelcontextprotocol/server';
import { type SkillSource, SkillsExtension } from '@modelcontextprotocol/server/ext/skills';
import type { Principal } from '../auth/principal.js';
import { activateSkillOutput, activateSkillTool } from '../chat/tools/style-tools.js';
import { inputJsonSchema, parseToolArguments } from '../chat/tools/skill-tool.js';
import { AppError, type ErrorCode } from '../common/app-error.js';
import { packageVersion } from '../config/package-version.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { CatalogueSnapshot } from '../skills/catalogue-snapshot.js';
import { SkillRegistryService } from '../skills/skill-registry.service.js';
import { SkillResourcesService } from '../skills/skill-resources.service.js';
import { PublishedSkillsService, recordsAfter } from './published-skills.service.js';

/** What the server tells MCP clients about itself at initialisation. */
const INSTRUCTIONS = [
  "Skillhost serves this team's Agent Skills. Clients with the MCP Skills extension (io.modelcontextprotocol/skills) list them with skills/list and read each file as a skill:// resource, verified against its digest.",
  'Other clients: call activate_skill with a skill name to get its instructions and its list of files (read a file as skill://<name>/<path>), or use the prompt named after the skill.',
].join(' ');

const PROMPT_ARGUMENT = 'request';

/*
 * Params are checked with these (the SDK's three-argument handlers), so a malformed request is
 * -32602 Invalid params, as the specification asks, not an internal error.
 */
const LIST_PARAMS = z.looseObject({ cursor: z.string().optional() });
const CALL_PARAMS = z.looseObject({ name: z.string(), arguments: z.record(z.string(), z.unknown()).optional() });
const PROMPT_PARAMS = z.looseObject({ name: z.string(), arguments: z.record(z.string(), z.string()).optional() });

/**
 * Builds the MCP server one caller talks to: the skills of that user's catalogue (shared skills and
 * their personal ones, their filter applied, as a new chat of theirs would have), read afresh on
 * every request so a session sees a reload at once. Three ways in, over the same reads:
 *
 * - the MCP Skills extension (`skills/list`, `skills/get`, `skill://` resources, directory reads),
 *   served by the SDK's `SkillsExtension` over this catalogue;
 * - for clients without the extension, the `activate_skill` tool (the chat tool of the same name:
 *   the same enum of names, description and answer);
 * - one prompt per skill, so a client that maps prompts to slash commands offers `/skill-name`.
 *
 * Tools and prompts are answered by handlers that read the catalogue per call, rather than
 * registered one by one, so building a server costs the same for ten skills as for ten thousand.
 */
@Injectable()
export class McpServerFactory {
  private readonly logger = new Logger('Mcp');
  private readonly version: string;

  constructor(
    private readonly registry: SkillRegistryService,
    private readonly resources: SkillResourcesService,
    private readonly published: PublishedSkillsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.version = packageVersion();
  }

  create(principal: Principal): McpServer {
    const mcp = new McpServer({ name: 'skillhost', version: this.version }, { instructions: INSTRUCTIONS });
    const view = () => this.registry.viewForUser(principal.userId);
    new SkillsExtension({
      source: this.skillSource(view),
      cacheHint: { ttlMs: this.config.app.mcp.cacheTtlMs, cacheScope: 'private' },
      onWarning: (warning) => this.logger.warn(`${warning.path}: ${warning.message}`),
    }).attach(mcp);
    mcp.server.registerCapabilities({ resources: { listChanged: true }, tools: { listChanged: true }, prompts: { listChanged: true } });
    this.serveActivateTool(mcp.server, view);
    this.servePrompts(mcp.server, view);
    return mcp;
  }

  /** The extension's methods over the user's catalogue; pages are cursors over skill names. */
  private skillSource(view: () => Promise<CatalogueSnapshot>): SkillSource {
    const pageSize = this.config.app.mcp.pageSize;
    return {
      list: async ({ cursor }) => {
        const page = await this.published.page(await view(), decodeCursor(cursor), pageSize);
        return { skills: page.skills.map((skill) => skill.entry), ...(page.next === undefined ? {} : { nextCursor: encodeCursor(page.next) }) };
      },
      get: async (uri) => (await this.published.skillAt(await view(), uri))?.entry,
      read: async (uri) => {
        const file = await readOrUndefined(async () => this.published.file(await view(), uri));
        if (file === undefined) return undefined;
        return file.isText ? { text: file.bytes.toString('utf8'), mimeType: file.mimeType } : { bytes: file.bytes, mimeType: file.mimeType };
      },
      readDirectory: async (uri, { cursor }) => {
        const children = await this.published.directory(await view(), uri);
        if (children === undefined) return undefined;
        const start = decodeOffset(cursor);
        const page = children.slice(start, start + pageSize);
        return { resources: page, ...(start + pageSize < children.length ? { nextCursor: encodeCursor(String(start + pageSize)) } : {}) };
      },
      listResources: async () =>
        (await this.published.all(await view())).map(({ entry, record, files }) => ({
          uri: entry.uri,
          name: record.name,
          description: record.description,
          mimeType: 'text/markdown',
          size: files.get('SKILL.md')?.size,
        })),
    };
  }

  private serveActivateTool(server: Server, view: () => Promise<CatalogueSnapshot>): void {
    server.setRequestHandler('tools/list', { params: LIST_PARAMS }, async () => {
      const tool = activateSkillTool(await view());
      return { tools: [{ name: tool.wireName, description: tool.description, inputSchema: inputJsonSchema(tool) as { type: 'object' } }] };
    });
    server.setRequestHandler('tools/call', { params: CALL_PARAMS }, async (params) => {
      const snapshot = await view();
      const tool = activateSkillTool(snapshot);
      if (params.name !== tool.wireName) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool '${params.name}'; this server offers ${tool.wireName}.`);
      const input = parseToolArguments(tool, params.arguments ?? {});
      if (!input.ok) return errorResult(input.message);
      const { name } = input.input as { name: string };
      try {
        const result = await activateSkillOutput(this.resources.reader({ snapshot }), name);
        return { content: [{ type: 'text' as const, text: result.output }] };
      } catch (error) {
        // A tool's failure is a result the model reads (naming the skills that exist), as in a chat.
        if (error instanceof AppError) return errorResult(`[${error.code}] ${error.message}`);
        throw error;
      }
    });
  }

  private servePrompts(server: Server, view: () => Promise<CatalogueSnapshot>): void {
    const pageSize = this.config.app.mcp.pageSize;
    server.setRequestHandler('prompts/list', { params: LIST_PARAMS }, async (params) => {
      const skills = [...recordsAfter(await view(), decodeCursor(params.cursor))];
      const page = skills.slice(0, pageSize);
      return {
        prompts: page.map((skill) => ({
          name: skill.name,
          description: skill.description,
          arguments: [{ name: PROMPT_ARGUMENT, description: 'What to do with the skill (optional).', required: false }],
        })),
        ...(skills.length > pageSize ? { nextCursor: encodeCursor(page[page.length - 1].name) } : {}),
      };
    });
    server.setRequestHandler('prompts/get', { params: PROMPT_PARAMS }, async (params) => {
      const snapshot = await view();
      const name = params.name;
      if (!snapshot.skills.has(name)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `No prompt named '${name}': prompts are the skills of your catalogue.`);
      let activated;
      try {
        activated = await activateSkillOutput(this.resources.reader({ snapshot }), name);
      } catch (error) {
        throw protocolErrorOf(error);
      }
      const wanted = params.arguments?.[PROMPT_ARGUMENT]?.trim();
      const text = wanted ? `${activated.output}\n\nUse the skill '${name}' for this: ${wanted}` : `${activated.output}\n\nFollow the skill '${name}' above.`;
      return { description: snapshot.skills.get(name)?.description, messages: [{ role: 'user', content: { type: 'text', text } }] };
    });
  }
}

function errorResult(text: string) {
  return { content: [{ type: 'text' as const, text }], isError: true };
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
    if (error instanceof AppError && isNotTheirs(error.code)) return undefined;
    throw protocolErrorOf(error);
  }
}

/** What the caller asked for does not exist for them: the codes MCP answers -32602. */
function isNotTheirs(code: ErrorCode): boolean {
  return code.startsWith('SKILL_') || code.startsWith('RESOURCE_');
}

/** A domain error as a JSON-RPC error: -32602 for what is not the caller's, -32603 for the server's failures, the code in `data`. */
function protocolErrorOf(error: unknown): unknown {
  if (!(error instanceof AppError)) return error;
  return new ProtocolError(isNotTheirs(error.code) ? ProtocolErrorCode.InvalidParams : ProtocolErrorCode.InternalError, `[${error.code}] ${error.message}`, { code: error.code });
}

/** Cursors are opaque to clients: the last name (or offset) of the page, base64url. */
function encodeCursor(value: string): string {
  return Buffer.from(value, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const value = Buffer.from(cursor, 'base64url').toString('utf8');
  if (value === '' || encodeCursor(value) !== cursor) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor: pass the nextCursor of the previous page unchanged.');
  return value;
}

function decodeOffset(cursor: string | undefined): number {
  const value = decodeCursor(cursor);
  if (value === undefined) return 0;
  const offset = Number(value);
  if (!Number.isSafeInteger(offset) || offset < 0) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid cursor: pass the nextCursor of the previous page unchanged.');
  return offset;
}
