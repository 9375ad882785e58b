import { type DynamicModule, Module } from '@nestjs/common';
import { AgentSkillsIndexController } from './agent-skills-index.controller.js';
import { McpController } from './mcp.controller.js';
import { McpServerFactory } from './mcp-server.factory.js';
import { McpTransportService } from './mcp-transport.service.js';
import { PublishedSkillsService } from './published-skills.service.js';
import { DiscoveryIndexService } from './discovery-index.service.js';
import { PersistenceModule } from '../../infra/database/persistence.module.js';

/** A front door: the team's skills for every agent, over MCP (`/mcp`) and the discovery index. */
@Module({})
export class McpModule {
  /** Over the app's TeamSkillsModule (given, so that every door shares one instance of it). */
  static forSkills(skills: DynamicModule): DynamicModule {
    return {
      module: McpModule,
      imports: [skills, PersistenceModule],
      controllers: [McpController, AgentSkillsIndexController],
      providers: [PublishedSkillsService, DiscoveryIndexService, McpServerFactory, McpTransportService],
    };
  }
}
