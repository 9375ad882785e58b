import { Module } from '@nestjs/common';
import { TeamSkillsModule } from '../../domain/skills/team-skills.module.js';
import { AgentSkillsIndexController } from '../http/agent-skills-index.controller.js';
import { McpController } from './mcp.controller.js';
import { McpServerFactory } from './mcp-server.factory.js';
import { McpTransportService } from './mcp-transport.service.js';
import { PublishedSkillsService } from './published-skills.service.js';

/** A front door: the team's skills for every agent, over MCP (`/mcp`) and the discovery index. */
@Module({
  imports: [TeamSkillsModule],
  controllers: [McpController, AgentSkillsIndexController],
  providers: [PublishedSkillsService, McpServerFactory, McpTransportService],
})
export class McpModule {}
