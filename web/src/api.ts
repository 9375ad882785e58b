/**
 * The page's only way to the server: Skillhost's public REST API, with the API key from session
 * storage (when auth is on), or else the sign-in cookie, whose writes carry the session's CSRF token.
 * What a team's own client would do, so it doubles as an example.
 */
const KEY_STORAGE = 'skillhost.apiKey';
/** The web session's CSRF token (GET /v1/auth/session), kept in memory only. */
let csrfToken: string | null = null;

export function useCsrfToken(token: string | null): void {
  csrfToken = token;
}

export interface ApiError {
  status: number;
  code: string;
  message: string;
}

export class ApiFailure extends Error {
  constructor(readonly error: ApiError) {
    super(error.message);
  }
}

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_STORAGE);
}

export function storeKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(KEY_STORAGE);
  else sessionStorage.setItem(KEY_STORAGE, key);
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const key = storedKey();
  if (key !== null) return { authorization: `Bearer ${key}`, ...extra };
  return { ...(csrfToken === null ? {} : { 'x-csrf-token': csrfToken }), ...extra };
}

async function failure(response: Response): Promise<ApiFailure> {
  let body: { code?: string; message?: string } = {};
  try {
    body = (await response.json()) as typeof body;
  } catch {
    // Not JSON: the status says enough.
  }
  return new ApiFailure({
    status: response.status,
    code: body.code ?? 'HTTP_ERROR',
    message: body.message ?? `${response.status} ${response.statusText}`,
  });
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw await failure(response);
  return (response.status === 204 ? undefined : await response.json()) as T;
}

/** One server-sent event of a turn. */
export interface TurnEvent {
  event: string;
  data: unknown;
}

/**
 * Sends a message and reads the turn as server-sent events (`tool-call`, `tool-result`,
 * `text-delta`, then `done` or `error`). EventSource cannot POST, so the stream is read by hand.
 */
export async function streamTurn(
  chatId: string,
  body: { content: string; model?: string },
  onEvent: (event: TurnEvent) => void,
): Promise<void> {
  const response = await fetch(`/v1/chats/${encodeURIComponent(chatId)}/messages`, {
    method: 'POST',
    headers: headers({ 'content-type': 'application/json', accept: 'text/event-stream' }),
    body: JSON.stringify(body),
  });
  if (!response.ok || response.body === null) throw await failure(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(frame)?.[1];
      const data = frame
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      if (event !== undefined && data !== '') onEvent({ event, data: JSON.parse(data) });
    }
  }
}
