import { ApiProperty } from '@nestjs/swagger';

/** One OAuth grant as `GET /v1/me/oauth-grants` answers it. Documentation only. */
export class OAuthGrantDto {
  @ApiProperty({ description: 'What `DELETE /v1/me/oauth-grants/{id}` takes.' })
  grantId: string;

  @ApiProperty({ description: 'The client as it registered (dynamic client registration).' })
  clientId: string;

  @ApiProperty({ type: String, nullable: true, description: 'The name the client gave itself.' })
  clientName: string | null;

  @ApiProperty({ type: [String], example: ['chats', 'skills:read'] })
  scopes: string[];

  @ApiProperty({ type: [String], description: 'The resources its tokens are for (`/mcp`).' })
  resources: string[];

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  expiresAt: string | null;
}

export class OAuthGrantListDto {
  @ApiProperty({ type: [OAuthGrantDto] })
  items: OAuthGrantDto[];
}
