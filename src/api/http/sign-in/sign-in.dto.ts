import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';
import { UserDto } from '../dto/user-responses.dto.js';

export class SignInProviderDto {
  @ApiProperty({ example: 'Acme SSO', description: 'For the "Sign in with …" button.' })
  name: string;

  @ApiProperty({ example: '/auth/oidc/start', description: 'Where the browser goes to sign in (add `?returnTo=/…`).' })
  startUrl: string;
}

export class SignInProvidersDto {
  @ApiProperty({ type: SignInProviderDto, nullable: true, description: 'Null when sign-in is off (API keys only).' })
  oidc: SignInProviderDto | null;
}

export class WebSessionDto {
  @ApiProperty({ type: UserDto })
  user: UserDto;

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'Send as `x-csrf-token` on every write made with the session cookie; null when this call came with an API key.',
  })
  csrfToken: string | null;
}

export class MapSignInDto {
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: 320,
    description: "The user's email: a person whose verified email it is signs in as this user. Null clears it.",
  })
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsString()
  @MaxLength(320)
  email?: string | null;

  @ApiPropertyOptional({
    maxLength: 255,
    description: "The provider's subject (`sub`) of the person, linked to this user for the configured issuer.",
  })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  subject?: string;
}

export class SignInMappingDto {
  @ApiProperty({ type: String, nullable: true })
  email: string | null;
}
