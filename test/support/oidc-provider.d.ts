/**
 * The few parts of `oidc-provider` (which ships no types) the tests use to run a real OpenID provider on 127.0.0.1.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Account {
    accountId: string;
    claims(): Record<string, unknown> | Promise<Record<string, unknown>>;
  }

  interface ProviderConfiguration {
    clients?: Record<string, unknown>[];
    claims?: Record<string, string[]>;
    scopes?: string[];
    findAccount?: (context: unknown, id: string) => Account | undefined | Promise<Account | undefined>;
    features?: Record<string, unknown>;
    cookies?: { keys?: string[] };
    pkce?: { required?: () => boolean };
    [key: string]: unknown;
  }

  export default class Provider {
    constructor(issuer: string, configuration?: ProviderConfiguration);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
  }
}
