import { describe, expect, it } from '@jest/globals';
import { SESSION_EVENTS_KEPT, SessionEventStore } from './session-event-store.js';

const note = (n: number) => ({ jsonrpc: '2.0' as const, method: `notifications/n${n}` });

async function replay(store: SessionEventStore, after: string) {
  const sent: string[] = [];
  const stream = await store.replayEventsAfter(after, {
    send: async (_id, message) => void sent.push((message as { method: string }).method),
  });
  return { stream, sent };
}

describe('SessionEventStore', () => {
  it('replays the events of the same stream after the given id, in order', async () => {
    const store = new SessionEventStore();
    const first = await store.storeEvent('get', note(1));
    await store.storeEvent('other', note(2));
    await store.storeEvent('get', note(3));
    expect(await replay(store, first)).toEqual({ stream: 'get', sent: ['notifications/n3'] });
  });

  it(`keeps the last ${SESSION_EVENTS_KEPT}: an id it no longer keeps resumes from the oldest kept`, async () => {
    const store = new SessionEventStore();
    const ids: string[] = [];
    for (let n = 1; n <= SESSION_EVENTS_KEPT + 5; n++) ids.push(await store.storeEvent('get', note(n)));
    const { stream, sent } = await replay(store, ids[0]);
    expect(stream).toBe('get');
    expect(sent).toHaveLength(SESSION_EVENTS_KEPT);
    expect(sent[0]).toBe('notifications/n6');
  });

  it('an id it never gave out names no stream', async () => {
    const store = new SessionEventStore();
    await store.storeEvent('get', note(1));
    for (const id of ['2', '0', '-1', 'abc', '1e3', '', '01']) {
      expect(await store.getStreamIdForEventId(id)).toBeUndefined();
      expect(store.gaveOut(id)).toBe(false);
    }
    expect(store.gaveOut('1')).toBe(true);
  });
});
