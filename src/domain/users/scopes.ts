import type { UserRole } from './user.types.js';

/**
 * What a route needs of an OAuth token (the MCP authorization specification's scopes): reading the skills
 * (`skills:read`: catalogues, `/mcp`, the index), chats and the gateway (`chats`), the admin routes (`admin`). An API
 * key carries every scope its user's role allows, so keys work as they always have.
 */
export const SCOPES = ['skills:read', 'chats', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** What the scope checks read of a principal (principal.ts), named here so that neither file imports the other. */
interface ScopedPrincipal {
  readonly role: UserRole;
  readonly scopes?: ReadonlySet<Scope>;
}

/** What a role may be granted: admins everything, members all but `admin`. */
export function scopesOfRole(role: UserRole): readonly Scope[] {
  return role === 'admin' ? SCOPES : SCOPES.filter((scope) => scope !== 'admin');
}

/** Whether the principal holds `scope`: a key (no `scopes`) whatever its role allows, a token what was granted too. */
export function holdsScope(principal: ScopedPrincipal, scope: Scope): boolean {
  if (!scopesOfRole(principal.role).includes(scope)) return false;
  return principal.scopes === undefined || principal.scopes.has(scope);
}

/** Whether the principal holds every scope its role allows (a key, or a token granted all of them). */
export function holdsEveryScope(principal: ScopedPrincipal): boolean {
  return scopesOfRole(principal.role).every((scope) => holdsScope(principal, scope));
}

/** The scopes in a space-separated OAuth `scope` string that Skillhost knows; others are ignored. */
export function parseScopes(scope: string | undefined): Set<Scope> {
  const known = new Set<string>(SCOPES);
  return new Set((scope ?? '').split(' ').filter((item): item is Scope => known.has(item)));
}
