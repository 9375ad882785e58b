import { describe, expect, it } from '@jest/globals';
import { holdsEveryScope, holdsScope, parseScopes, type Scope, scopesOfRole } from './scopes.js';

const token = (role: 'admin' | 'member', ...scopes: Scope[]) => ({ role, scopes: new Set(scopes) });

describe('scopes', () => {
  it('a key (no scopes) holds what its role allows: a member never `admin`', () => {
    expect(holdsScope({ role: 'member' }, 'chats')).toBe(true);
    expect(holdsScope({ role: 'member' }, 'admin')).toBe(false);
    expect(holdsScope({ role: 'admin' }, 'admin')).toBe(true);
    expect(holdsEveryScope({ role: 'member' })).toBe(true);
  });

  it('a token holds what was granted and its role still allows', () => {
    expect(holdsScope(token('admin', 'skills:read'), 'skills:read')).toBe(true);
    expect(holdsScope(token('admin', 'skills:read'), 'chats')).toBe(false);
    // An admin demoted after the grant loses `admin` at once.
    expect(holdsScope(token('member', 'admin'), 'admin')).toBe(false);
    expect(holdsEveryScope(token('member', 'skills:read', 'chats'))).toBe(true);
    expect(holdsEveryScope(token('admin', 'skills:read', 'chats'))).toBe(false);
  });

  it('reads the known scopes of an OAuth scope string and drops the rest', () => {
    expect([...parseScopes('openid chats  skills:read offline_access admin:write')]).toEqual(['chats', 'skills:read']);
    expect(parseScopes(undefined).size).toBe(0);
    expect(scopesOfRole('member')).toEqual(['skills:read', 'chats']);
  });
});
