/**
 * The part of oidc-provider 9 (which ships no types) Skillhost uses: the provider, its Node handler, interactions,
 * grants, access tokens and its own sign-in sessions.
 * https://github.com/panva/node-oidc-provider/blob/v9.x/docs/README.md
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface InteractionDetails {
    uid: string;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown>;
    session?: { accountId?: string };
    grantId?: string;
    returnTo: string;
  }

  export interface GrantInstance {
    accountId: string;
    clientId: string;
    addOIDCScope(scope: string): void;
    rejectOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    rejectResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  export interface AccessTokenInstance {
    accountId: string;
    clientId: string;
    grantId: string;
    scope?: string;
    aud?: string | string[];
    exp?: number;
    isExpired: boolean;
  }

  export interface ClientInstance {
    clientId: string;
    clientName?: string;
    redirectUris: string[];
    grantTypeAllowed(type: string): boolean;
  }

  export interface SessionInstance {
    accountId?: string;
    destroy(): Promise<void>;
  }

  /** The Koa context the provider (a Koa application) makes for a request: its signed cookies. */
  export interface ProviderContext {
    cookies: {
      get(name: string, options?: { signed?: boolean }): string | undefined;
      set(
        name: string,
        value: string | null,
        options?: { signed?: boolean; httpOnly?: boolean; sameSite?: string },
      ): void;
    };
  }

  export class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    proxy: boolean;
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    createContext(request: IncomingMessage, response: ServerResponse): ProviderContext;
    cookieName(type: 'session' | 'interaction' | 'resume'): string;
    interactionDetails(request: IncomingMessage, response: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(
      request: IncomingMessage,
      response: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    on(event: string, listener: (...args: unknown[]) => void): this;
    Grant: {
      new (properties: { accountId: string; clientId: string }): GrantInstance;
      find(id: string): Promise<GrantInstance | undefined>;
    };
    AccessToken: { find(token: string): Promise<AccessTokenInstance | undefined> };
    Client: { find(id: string): Promise<ClientInstance | undefined> };
    Session: { find(id: string): Promise<SessionInstance | undefined> };
  }

  export const errors: {
    InvalidTarget: new (description?: string) => Error;
    InvalidRequest: new (description?: string) => Error;
  };
  export default Provider;
}
