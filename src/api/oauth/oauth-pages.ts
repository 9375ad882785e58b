import { hash } from 'node:crypto';

/**
 * The sign-in, consent and error pages of the OAuth flow: plain server-rendered HTML, no script, one stylesheet
 * whose hash the CSP names, so nothing else can run or load on them.
 */
const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}' +
  'h1{font-size:1.4rem}code{background:#f2f2f2;padding:0 .2rem}.error{color:#b00020}' +
  'input[type=password]{width:100%;padding:.5rem;margin:.5rem 0;box-sizing:border-box}' +
  'button{padding:.5rem 1rem;margin-right:.5rem}ul{padding-left:1.2rem}.muted{color:#666;font-size:.9rem}';
const STYLE_HASH = `'sha256-${hash('sha256', STYLE, 'base64')}'`;

/**
 * The pages' CSP: nothing but the inline stylesheet; forms post to this server and, since browsers apply
 * `form-action` to the redirect after a post, to the client's redirect URI's origin.
 */
export function pageSecurityPolicy(formTargets: readonly string[]): string {
  const targets = ["'self'", ...formTargets].join(' ');
  return (
    `default-src 'none'; style-src ${STYLE_HASH}; form-action ${targets}; frame-ancestors 'none'; ` + "base-uri 'none'"
  );
}

export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character]!,
  );
}

function page(title: string, body: string): string {
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" ` +
    `content="width=device-width,initial-scale=1"><meta name="referrer" content="same-origin">` +
    `<title>${escapeHtml(title)} · Skillhost</title><style>${STYLE}</style></head><body>${body}</body></html>`
  );
}

export interface SignInPage {
  action: string;
  csrf: string;
  clientName: string;
  error?: string;
  /** The web sign-in through the team's identity provider, coming back to this page (when one is configured). */
  providerSignIn?: { name: string; href: string };
}

/**
 * Sign in through the team's identity provider (when configured) or with an API key. A browser already signed in to
 * the web page skips this page.
 */
export function renderSignIn({ action, csrf, clientName, error, providerSignIn }: SignInPage): string {
  return page(
    'Sign in',
    `<h1>Sign in to Skillhost</h1><p><strong>${escapeHtml(clientName)}</strong> asks to use Skillhost for you.</p>` +
      (error === undefined ? '' : `<p class="error" role="alert">${escapeHtml(error)}</p>`) +
      (providerSignIn === undefined
        ? ''
        : `<p><a class="provider" href="${escapeHtml(providerSignIn.href)}">Sign in with ` +
          `${escapeHtml(providerSignIn.name)}</a></p><p class="muted">Or with an API key:</p>`) +
      `<form method="post" action="${escapeHtml(action)}"><input type="hidden" name="csrf" ` +
      `value="${escapeHtml(csrf)}">` +
      `<label for="api_key">Your API key (<code>skh_…</code>)</label>` +
      `<input id="api_key" name="api_key" type="password" autocomplete="off" required autofocus>` +
      `<button type="submit">Sign in</button></form>` +
      `<p class="muted">The key is checked once and not given to the client: it gets a token of its own, which ` +
      `you can revoke (<code>GET /v1/me/oauth-grants</code>).</p>`,
  );
}

export interface ConsentPage {
  confirm: string;
  deny: string;
  csrf: string;
  clientName: string;
  clientId: string;
  redirectUri: string;
  userName: string;
  granted: readonly { scope: string; meaning: string }[];
  refused: readonly string[];
}

/** The consent screen: who asks, for what, and where the answer goes. */
export function renderConsent(view: ConsentPage): string {
  const hidden = `<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">`;
  const granted = view.granted
    .map(({ scope, meaning }) => `<li><code>${escapeHtml(scope)}</code>: ${escapeHtml(meaning)}</li>`)
    .join('');
  const refused =
    view.refused.length === 0
      ? ''
      : `<p class="muted">Not granted (your role does not allow it): ${view.refused
          .map((scope) => `<code>${escapeHtml(scope)}</code>`)
          .join(', ')}</p>`;
  return page(
    'Allow access',
    `<h1>Allow <strong>${escapeHtml(view.clientName)}</strong> to act as ${escapeHtml(view.userName)}?</h1>` +
      `<p class="muted">Client <code>${escapeHtml(view.clientId)}</code>, answering to ` +
      `<code>${escapeHtml(view.redirectUri)}</code>.</p>` +
      `<p>It will be able to:</p><ul>${granted || '<li>nothing beyond knowing who you are</li>'}</ul>${refused}` +
      `<form method="post" action="${escapeHtml(view.confirm)}">${hidden}<button type="submit">Allow</button></form>` +
      `<form method="post" action="${escapeHtml(view.deny)}">${hidden}<button type="submit">Deny</button></form>`,
  );
}

/** An OAuth error shown to the person (the provider's, or an interaction's). */
export function renderOAuthError(out: Record<string, string>): string {
  const description = out.error_description ?? out.error ?? 'Something went wrong.';
  return page(
    'Sign-in failed',
    `<h1>This sign-in cannot go on</h1><p class="error">${escapeHtml(description)}</p>` +
      `<p class="muted">Start again from your MCP client.</p>`,
  );
}
