/** Turn events too large for a notification, kept briefly for the other instances to read by id. */
export interface ChatEventRelay {
  /** Stores one event's JSON text and returns its id. */
  store(chatId: string, eventJson: string): Promise<string>;
  /** The event's JSON text, or null when no event of that chat has the id (any more). */
  find(id: string, chatId: string): Promise<string | null>;
}

export const CHAT_EVENT_RELAY = Symbol('CHAT_EVENT_RELAY');
