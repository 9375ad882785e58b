import type { ConversationItem } from './conversation-items.js';

/** A response of the gateway's responses API, kept for `GET /openai/v1/responses/:id` and `previous_response_id`. */
export interface StoredResponse {
  id: string;
  userId: string;
  /** The Skillhost chat the conversation is. */
  chatId: string;
  model: string;
  createdAt: Date;
  /** The conversation up to this response, its input included: what a request naming it continues. */
  items: ConversationItem[];
  /** What the model answered: its text, and the calls of the client's tools. */
  output: ConversationItem[];
  /** The request's `instructions`, answered back as OpenAI does. */
  instructions: string | null;
  usage: { inputTokens: number | null; outputTokens: number | null };
}

/** The gateway's storage: which chat a resent history continues, and the stored responses. */
export interface GatewayStore {
  /** The chat of `userId` whose conversation reached `fingerprint` last, if any (and still there). */
  chatForFingerprint(userId: string, fingerprint: string): Promise<string | null>;
  /** Remembers that the user's conversation `chatId` has reached `fingerprint` (the latest chat to reach it wins). */
  rememberFingerprint(userId: string, fingerprint: string, chatId: string): Promise<void>;
  saveResponse(response: StoredResponse): Promise<void>;
  /** The user's stored response; null for another user's or none. */
  findResponse(id: string, userId: string): Promise<StoredResponse | null>;
}

export const GATEWAY_STORE = Symbol('GATEWAY_STORE');
