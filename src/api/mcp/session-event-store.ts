import type { EventId, EventStore, JSONRPCMessage, StreamId } from '@modelcontextprotocol/server';

/** A session keeps this many of its last events for a client that reconnects. */
export const SESSION_EVENTS_KEPT = 64;

/**
 * The events of one 2025-era session, kept so a client whose notification stream dropped hears on
 * reconnecting (with `Last-Event-ID`) what it missed: list-changed notifications it would otherwise
 * never refetch for. Bounded: the last `SESSION_EVENTS_KEPT` events. An id this session gave out
 * but no longer keeps replays every event it still keeps (the client missed at least those); an id
 * it never gave out (not a number, or past the last) names no stream, and the SDK answers 400.
 * Ids count from 1 in each session: another session's id is only a number here.
 */
export class SessionEventStore implements EventStore {
  private readonly events: { id: EventId; streamId: StreamId; message: JSONRPCMessage }[] = [];
  private next = 1;

  async storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const id = `${this.next++}`;
    this.events.push({ id, streamId, message });
    if (this.events.length > SESSION_EVENTS_KEPT) this.events.shift();
    return id;
  }

  async getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    return this.streamOf(eventId);
  }

  /** Whether `eventId` is one this session gave out (so a GET resuming from it will be served). */
  gaveOut(eventId: EventId): boolean {
    return this.streamOf(eventId) !== undefined;
  }

  private streamOf(eventId: EventId): StreamId | undefined {
    return this.events.find((event) => event.id === eventId)?.streamId ?? this.oldestStream(eventId);
  }

  async replayEventsAfter(
    lastEventId: EventId,
    { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    const streamId = (await this.getStreamIdForEventId(lastEventId)) ?? '';
    const after = Number(lastEventId);
    for (const event of this.events) {
      // The SDK stores an empty priming event on some streams: it is not a message to replay.
      if (event.streamId === streamId && Number(event.id) > after && 'jsonrpc' in event.message)
        await send(event.id, event.message);
    }
    return streamId;
  }

  /**
   * An id this session gave out but no longer keeps still names its stream (the notification
   * stream, as every event of a session's GET stream is): the client resumes from the oldest kept.
   */
  private oldestStream(eventId: EventId): StreamId | undefined {
    const id = Number(eventId);
    if (!/^[1-9][0-9]{0,15}$/.test(eventId) || id >= this.next) return undefined;
    return this.events[0]?.streamId;
  }
}
