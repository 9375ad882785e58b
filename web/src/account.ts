import { api, ApiFailure, storedKey, storeKey, useCsrfToken } from './api.js';
import { byId, h, when } from './dom.js';

/**
 * The person's account on the page: signing in with the team's identity provider (when the server has one), the
 * web session's CSRF token, logging out, their own API keys (list, create, revoke) for agents and the CLI, and the
 * OAuth grants they gave MCP clients (list, revoke; when the server is an OAuth server).
 */

interface Providers {
  oidc: { name: string; startUrl: string } | null;
}

interface ApiKeyItem {
  id: string;
  label: string | null;
  prefix: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

interface OAuthGrantItem {
  grantId: string;
  clientId: string;
  /** Chosen by whoever registered the client: shown as text only. */
  clientName: string | null;
  scopes: string[];
  createdAt: string;
  expiresAt: string | null;
}

/** Why a sign-in came back refused, by the code the server put in `?sign_in_error=`. */
const SIGN_IN_ERRORS: Record<string, string> = {
  SIGN_IN_STATE_INVALID: 'That sign-in was too old, used already or started elsewhere; sign in again.',
  SIGN_IN_NOT_ALLOWED: 'Your account may not sign in to this server; ask an admin.',
  SIGN_IN_USER_CONFLICT: 'A user of your name exists but is not linked to you; ask an admin to link them.',
  SIGN_IN_CLAIMS_INVALID: 'The identity provider did not say who you are in a form this server takes; ask an admin.',
  SIGN_IN_FAILED: 'The identity provider refused the sign-in; try again.',
  SIGN_IN_PROVIDER_UNAVAILABLE: 'The identity provider could not be reached; try again shortly.',
};

/** Whether the page is signed in by the cookie (rather than an API key or with auth off). */
let bySession = false;

export function signedInBySession(): boolean {
  return bySession;
}

/**
 * The session of the sign-in cookie, if there is one: then its CSRF token is used for writes. False without a
 * session (no cookie, or it ended).
 */
export async function resumeSession(): Promise<boolean> {
  try {
    const session = await api<{ csrfToken: string | null }>('GET', '/v1/auth/session');
    bySession = session.csrfToken !== null;
    useCsrfToken(session.csrfToken);
  } catch (error) {
    if (!(error instanceof ApiFailure) || error.error.status !== 401) throw error;
    bySession = false;
  }
  return bySession;
}

/** Shows "Sign in with …" in the sign-in dialog when the server has an identity provider, and why one failed. */
export async function offerProviderSignIn(): Promise<void> {
  const providers = await api<Providers>('GET', '/v1/auth/providers');
  const link = byId<HTMLAnchorElement>('sign-in-provider');
  if (providers.oidc !== null) {
    const returnTo = location.pathname + location.search.replace(/([?&])sign_in_error=[^&]*&?/, '$1');
    link.href = `${providers.oidc.startUrl}?returnTo=${encodeURIComponent(returnTo.replace(/[?&]$/, ''))}`;
    link.textContent = `Sign in with ${providers.oidc.name}`;
    byId('sign-in-provider-row').hidden = false;
  }
}

/** What the page says of a sign-in that came back refused (`?sign_in_error=CODE`); empty when none did. */
export function signInProblem(): string {
  const failed = new URLSearchParams(location.search).get('sign_in_error');
  if (failed === null) return '';
  return SIGN_IN_ERRORS[failed] ?? `Sign-in failed (${failed}).`;
}

/**
 * Logs this browser out: the web session, and the OAuth server's sign-in it may keep (made on its page with a key or
 * the session), which the server ends at logout too. Signed in by a key, the key is forgotten even when the server
 * refuses it (revoked meanwhile).
 */
export async function logOut(): Promise<void> {
  const byKey = storedKey() !== null;
  try {
    if (bySession || byKey) await api('POST', '/v1/auth/logout');
  } catch (error) {
    if (!byKey || !(error instanceof ApiFailure) || error.error.status !== 401) throw error;
  } finally {
    storeKey(null);
  }
  bySession = false;
  useCsrfToken(null);
}

/** The keys panel: opened from the bar, it lists the person's keys and makes or revokes one. */
export function wireKeysPanel(onProblem: (error: unknown) => void): void {
  const dialog = byId<HTMLDialogElement>('keys-dialog');
  byId('open-keys').addEventListener('click', () => {
    byId('new-key').hidden = true;
    dialog.showModal();
    refreshKeys().catch(onProblem);
  });
  byId('create-key-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const label = byId<HTMLInputElement>('key-label').value.trim();
    api<{ key: string }>('POST', '/v1/me/keys', label === '' ? {} : { label })
      .then(async (created) => {
        byId<HTMLInputElement>('key-label').value = '';
        byId('new-key-value').textContent = created.key;
        byId('new-key').hidden = false;
        await refreshKeys();
      })
      .catch(onProblem);
  });
}

async function refreshKeys(): Promise<void> {
  const { items } = await api<{ items: ApiKeyItem[] }>('GET', '/v1/me/keys');
  const rows = items
    .filter((key) => key.revokedAt === null)
    .map((key) => {
      const revoke = h('button', { type: 'button', text: 'Revoke', 'aria-label': `Revoke ${key.label ?? key.prefix}` });
      revoke.addEventListener('click', () => {
        api('DELETE', `/v1/me/keys/${encodeURIComponent(key.id)}`)
          .then(refreshKeys)
          .catch((error: unknown) => (byId('keys-error').textContent = String((error as Error).message)));
      });
      const used = key.lastUsedAt === null ? 'never used' : `last used ${when(key.lastUsedAt)}`;
      return h(
        'li',
        { class: 'key-row' },
        h('span', { text: `${key.label ?? '(no label)'} · ${key.prefix}… · made ${when(key.createdAt)} · ${used}` }),
        revoke,
      );
    });
  byId('key-list').replaceChildren(...(rows.length === 0 ? [h('li', { text: 'No keys yet.' })] : rows));
}

/**
 * Shows the bar's "MCP clients" button when this server is the OAuth server of its `/mcp` (its protected resource
 * metadata answers; 404 without OAuth).
 */
export async function offerGrantsPanel(): Promise<void> {
  try {
    await api('GET', '/.well-known/oauth-protected-resource');
  } catch (error) {
    if (error instanceof ApiFailure && error.error.status === 404) return;
    throw error;
  }
  byId('open-grants').hidden = false;
}

/** The grants panel: opened from the bar, it lists the MCP clients the person let act as them, and revokes one. */
export function wireGrantsPanel(): void {
  const dialog = byId<HTMLDialogElement>('grants-dialog');
  byId('open-grants').addEventListener('click', () => {
    byId('grants-error').textContent = '';
    dialog.showModal();
    refreshGrants().catch(showGrantsProblem);
  });
}

async function refreshGrants(): Promise<void> {
  const { items } = await api<{ items: OAuthGrantItem[] }>('GET', '/v1/me/oauth-grants');
  const rows = items.map((grant) => {
    const name = grant.clientName ?? grant.clientId;
    const revoke = h('button', { type: 'button', text: 'Revoke', 'aria-label': `Revoke ${name}` });
    revoke.addEventListener('click', () => {
      revoke.disabled = true;
      api('DELETE', `/v1/me/oauth-grants/${encodeURIComponent(grant.grantId)}`)
        .then(() => (byId('grants-error').textContent = ''))
        // Failed, it is said, and the list is read again all the same (the grant may be gone already).
        .catch(showGrantsProblem)
        .then(refreshGrants)
        .catch(showGrantsProblem);
    });
    const scopes = grant.scopes.length === 0 ? 'no scopes' : grant.scopes.join(', ');
    const until = grant.expiresAt === null ? '' : ` · until ${when(grant.expiresAt)}`;
    return h(
      'li',
      { class: 'key-row' },
      h(
        'span',
        { class: 'grant' },
        h('strong', { text: name }),
        ` · ${scopes} · granted ${when(grant.createdAt)}${until} · client ${grant.clientId}`,
      ),
      revoke,
    );
  });
  byId('grant-list').replaceChildren(...(rows.length === 0 ? [h('li', { text: 'No MCP client acts as you.' })] : rows));
}

function showGrantsProblem(error: unknown): void {
  const problem = error instanceof ApiFailure ? `${error.error.message} (${error.error.code})` : String(error);
  byId('grants-error').textContent = problem;
}
