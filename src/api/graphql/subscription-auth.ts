import { Logger } from '@nestjs/common';
import type { CredentialHeaders } from '../../domain/users/api-key.js';
import type { AuthService } from '../../domain/users/auth.service.js';
import { AppError, ErrorCode } from '@skillhost/core';
import { throttled } from '../../domain/shared/log-throttle.js';

/** graphql-transport-ws's close code for a connection that may not subscribe (its clients do not retry it). */
export const UNAUTHORIZED_CLOSE = 4401;

/** What `onConnect` is called on: mercurius's connection, with its socket and the upgrade request. */
export interface SubscriptionConnectionLike {
  socket: { close(code?: number, reason?: string): void };
  context?: { request?: { headers?: CredentialHeaders; ip?: string } };
}

const logger = new Logger('GraphQL');
const warnRefused = throttled((message) => logger.warn(message));

/**
 * mercurius's `onConnect`: the credentials of `connection_init` (else the upgrade request's own
 * headers) must name a user, as a request's must, before the connection is acknowledged. A refused
 * one is closed with 4401 and its reason, and logged at warn at most once a minute: anyone can
 * open connections, so they must not be able to fill the log. Accepted, the credentials sent become
 * the headers of every subscription on the connection.
 */
export async function authenticateConnection(
  auth: AuthService,
  connection: SubscriptionConnectionLike,
  payload: unknown,
): Promise<boolean | { headers: CredentialHeaders }> {
  const headers = connectionCredentials(payload);
  try {
    await auth.authenticate(headers ?? connection.context?.request?.headers ?? {});
  } catch (error) {
    if (!AppError.isInstance(error) || error.code !== ErrorCode.UNAUTHENTICATED) throw error;
    warnRefused(
      `A GraphQL WebSocket connection was refused (from ${connection.context?.request?.ip ?? 'an unknown address'})` +
        `: ${error.message}`,
    );
    // A close reason is at most 123 bytes.
    connection.socket.close(
      UNAUTHORIZED_CLOSE,
      Buffer.from(error.message)
        .subarray(0, 123)
        .toString('utf8')
        .replace(/\uFFFD$/, ''),
    );
    return false;
  }
  return headers === undefined ? true : { headers };
}

/**
 * The credentials a graphql-ws client sends in `connection_init`: `{authorization: "Bearer skh_…"}`
 * (or `{"x-api-key": "skh_…"}`), at the top of the payload or under `headers` as some clients
 * nest them; names in any case. Undefined when the payload carries none, so the upgrade request's
 * own headers apply.
 */
export function connectionCredentials(payload: unknown): CredentialHeaders | undefined {
  const credentials: CredentialHeaders = {};
  for (const source of [payload, (payload as { headers?: unknown } | null)?.headers]) {
    if (typeof source !== 'object' || source === null) continue;
    for (const [name, value] of Object.entries(source)) {
      const header = name.toLowerCase();
      if ((header === 'authorization' || header === 'x-api-key') && credentials[header] === undefined) {
        // Anything but a string is kept as it is and refused by the key parser as malformed.
        credentials[header] = value as string;
      }
    }
  }
  return Object.keys(credentials).length > 0 ? credentials : undefined;
}
