import type { OutgoingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { Controller, Delete, Get, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeEndpoint, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminOnly, CurrentPrincipal, RequireScope } from '../http/decorators/auth.decorators.js';
import type { Principal } from '../../domain/users/principal.js';
import { RequireFeature } from '../http/guards/feature.guard.js';
import { SkillRegistryService } from '@skillhost/nest';
import { McpReportDto } from '../http/dto/mcp-report.dto.js';
import { McpTransportService } from './mcp-transport.service.js';
import { PublishedSkillsService } from './published-skills.service.js';

/**
 * `/mcp`: the Streamable HTTP endpoint (POST messages, GET the notification stream, DELETE a
 * session), behind the same API keys, rate limits and feature switch as every route. The MCP SDK
 * answers; this only turns Fastify's request into a web `Request` and sends back its `Response`.
 */
@Controller()
@RequireFeature('mcp')
@RequireScope('skills:read')
@ApiTags('mcp')
export class McpController {
  constructor(
    private readonly transport: McpTransportService,
    private readonly published: PublishedSkillsService,
    private readonly registry: SkillRegistryService,
  ) {}

  @Post('mcp')
  @ApiExcludeEndpoint()
  post(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @CurrentPrincipal() principal: Principal) {
    return this.serve(request, reply, principal);
  }

  /** A 2025-era session's notification stream. */
  @Get('mcp')
  @ApiExcludeEndpoint()
  stream(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @CurrentPrincipal() principal: Principal) {
    return this.serve(request, reply, principal);
  }

  /** Closes a 2025-era session. */
  @Delete('mcp')
  @ApiExcludeEndpoint()
  end(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @CurrentPrincipal() principal: Principal) {
    return this.serve(request, reply, principal);
  }

  private async serve(request: FastifyRequest, reply: FastifyReply, principal: Principal) {
    const aborted = new AbortController();
    // The client went away (or the stream ended): the SDK closes what it opened for this request.
    const abort = () => aborted.abort();
    reply.raw.once('close', abort);
    const response = await this.transport.handle(webRequest(request, aborted.signal), request.body, principal);
    if (response.body === null || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
      // A POST or DELETE answered whole is over for the SDK: aborting it after would only build an AbortError
      // nobody reads. A GET's end is still heard: its session counts the notification streams open.
      if (request.method !== 'GET') reply.raw.off('close', abort);
      return sendWhole(reply, response);
    }
    // A stream's status and headers go out at once, not with its first event (a notification
    // stream may stay quiet for minutes; its client waits for the 200 to know it is listening).
    reply.hijack();
    const raw = reply.raw;
    const headers = {
      ...reply.getHeaders(),
      ...Object.fromEntries(response.headers),
      'x-accel-buffering': 'no',
    } as OutgoingHttpHeaders;
    raw.writeHead(response.status, headers);
    raw.flushHeaders();
    raw.on('error', () => undefined);
    const stream = Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>);
    stream.on('error', () => raw.destroy());
    // The client went away: the SDK's stream is cancelled too, so it knows the session no longer
    // listens (piping alone leaves it open, and the session could never listen again).
    raw.once('close', () => stream.destroy());
    stream.pipe(raw);
    return undefined;
  }

  @Get('v1/admin/mcp')
  @AdminOnly()
  @ApiTags('admin')
  @ApiOperation({
    summary: 'What /mcp and the discovery index serve',
    description:
      'Open sessions on this instance, how many skills are published, and every skill (team or personal) left ' +
      "out with the reason: over the MCP Skills extension's limits (512 files, 16 MiB), frontmatter the " +
      'extension refuses, a code or programmatic skill.',
  })
  @ApiOkResponse({ type: McpReportDto })
  async report(): Promise<McpReportDto> {
    return { sessions: this.transport.openSessions, ...(await this.published.report(this.registry.snapshot)) };
  }
}

/** The web `Request` the SDK reads: method, URL and headers; a POST's body is handed over parsed. */
function webRequest(request: FastifyRequest, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return new Request(new URL(request.url, 'http://skillhost.invalid'), { method: request.method, headers, signal });
}

/**
 * A JSON answer (or an empty one) sent as one buffer with its length: handed the `Response`, Fastify reads its body
 * through a web stream reader and writes it chunked. Its bytes as they are: a page of a list is tens of KiB, which
 * decoded to a string would be encoded again.
 */
async function sendWhole(reply: FastifyReply, response: Response): Promise<FastifyReply> {
  reply.code(response.status);
  for (const [name, value] of response.headers) reply.header(name, value);
  return reply.send(response.body === null ? undefined : Buffer.from(await response.arrayBuffer()));
}
