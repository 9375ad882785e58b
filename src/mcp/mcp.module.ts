import { Module } from '@nestjs/common';
import { SkillsApiModule } from '../skills/skills-api.module.js';
import { AgentSkillsIndexController } from './agent-skills-index.controller.js';
import { McpController } from './mcp.controller.js';
import { McpServerFactory } from './mcp-server.factory.js';
import { McpTransportService } from './mcp-transport.service.js';
import { PublishedSkillsService } from './published-skills.service.js';

/** A front door: the team's skills for every agent, over MCP (`/mcp`) and the discovery index. */
@Module({
  imports: [SkillsApiModule],
  controllers: [McpController, AgentSkillsIndexController],
  providers: [PublishedSkillsService, McpServerFactory, McpTransportService],
})
export class McpModule {}
