import { ApiProperty } from '@nestjs/swagger';

/** OpenAPI schemas of `GET /v1/admin/mcp` and the discovery index; documentation only. */

export class LeftOutSkillDto {
  @ApiProperty()
  name: string;

  @ApiProperty({ type: String, nullable: true, description: "A personal skill's owner; null for a team skill." })
  owner: string | null;

  @ApiProperty({ example: 'it has 600 files; the MCP Skills extension allows 512' })
  reason: string;
}

export class McpReportDto {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Open MCP sessions (2025-era clients) on this instance.' })
  sessions: number;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Skills loaded: the team catalogue and every personal skill.',
  })
  skills: number;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Of those, published over MCP and in the discovery index.' })
  published: number;

  @ApiProperty({ type: () => [LeftOutSkillDto] })
  leftOut: LeftOutSkillDto[];
}

export class IndexFileDto {
  @ApiProperty({ example: 'SKILL.md', description: 'Relative to the skill folder.' })
  path: string;

  @ApiProperty({
    example: 'sha256:9f86d08…',
    description: '`sha256:` and the SHA-256 of the raw bytes, 64 lowercase hex digits.',
  })
  digest: string;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Bytes.' })
  size: number;

  @ApiProperty({ description: 'Where to fetch it: `/.well-known/agent-skills/<name>/<path>`, with the same key.' })
  url: string;
}

export class IndexSkillVersionDto {
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'sha256:5e3a…',
    description:
      'The content digest the store and the chats pin by (versions.json lists every one); null for a folder ' +
      'past `max_install_bytes`.',
  })
  digest: string | null;

  @ApiProperty({ type: 'integer', nullable: true, description: "A store skill's version number; null for a folder's." })
  number: number | null;
}

export class IndexSkillDto {
  @ApiProperty()
  name: string;

  @ApiProperty()
  description: string;

  @ApiProperty({
    description: 'The skill-level digest of the proposal: SHA-256 over the sorted `path\\0hex\\n` lines of its files.',
  })
  digest: string;

  @ApiProperty({
    type: () => IndexSkillVersionDto,
    description: "Skillhost's own name for this version, beside the proposal's fields: what clients pin.",
  })
  version: IndexSkillVersionDto;

  @ApiProperty({ type: () => [IndexFileDto], description: 'Every file, SKILL.md first.' })
  files: IndexFileDto[];
}

export class AgentSkillsIndexDto {
  @ApiProperty({
    example: '0.2.0',
    description: 'The version of the Agent Skills discovery proposal this index follows.',
  })
  version: string;

  @ApiProperty({ type: () => [IndexSkillDto] })
  skills: IndexSkillDto[];
}

export class ListedVersionDto {
  @ApiProperty({
    example: 'sha256:34f7a8c4…',
    description:
      "The proposal's skill-level digest of this version: what `skillhost sync --pin NAME@DIGEST` takes, and what " +
      'the index names a skill by while this version is current.',
  })
  digest: string;

  @ApiProperty({
    type: () => IndexSkillVersionDto,
    description: "The store's content digest and number (both null for a skill from a folder).",
  })
  version: IndexSkillVersionDto;

  @ApiProperty({ description: 'Whether the index lists this version now.' })
  current: boolean;

  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Null for a skill from a folder.' })
  installedAt: string | null;

  @ApiProperty({
    type: 'object',
    nullable: true,
    additionalProperties: true,
    description: 'Where an imported version came from (url, ref, path, commit or digest); null otherwise.',
  })
  source: Record<string, string> | null;

  @ApiProperty({
    type: () => [IndexFileDto],
    description:
      "SKILL.md first. A stored version's URLs are `/.well-known/agent-skills/<name>@<version digest>/<path>` and " +
      "keep serving this version; a folder skill's are the index's.",
  })
  files: IndexFileDto[];
}

export class SkillVersionsDto {
  @ApiProperty()
  name: string;

  @ApiProperty({ description: 'The skill-level digest of the version the index lists now.' })
  current: string;

  @ApiProperty({ type: () => [ListedVersionDto], description: 'Newest first.' })
  versions: ListedVersionDto[];
}

export class AgentSkillsVersionsDto {
  @ApiProperty({ example: '0.2.0', description: 'The version of the discovery proposal the entries follow.' })
  version: string;

  @ApiProperty({ type: () => [SkillVersionsDto] })
  skills: SkillVersionsDto[];
}
