import { describe, expect, it } from '@jest/globals';
import { SandboxSlots, type SandboxSlotLimits, type SlotGrant } from './sandbox-slots.js';

function slots(overrides: Partial<SandboxSlotLimits> = {}): SandboxSlots {
  return new SandboxSlots({ instance: 4, perUser: 0, perTurn: 0, ...overrides });
}

function granted(grant: SlotGrant): () => void {
  if (!('release' in grant)) throw new Error(`refused: ${grant.refused}`);
  return grant.release;
}

describe(SandboxSlots.name, () => {
  it('grants up to the instance limit, refuses the next, and grants again once one is released', () => {
    const sut = slots({ instance: 2 });
    const first = granted(sut.take({ userId: 'a' }));
    granted(sut.take({ userId: 'b' }));
    expect(sut.take({ userId: 'c' })).toEqual({ refused: 'instance', limit: 2 });
    expect(sut.running).toBe(2);
    first();
    expect(sut.running).toBe(1);
    expect('release' in sut.take({ userId: 'c' })).toBe(true);
  });

  it('caps each user across turns and chats, leaving room for other users', () => {
    const sut = slots({ perUser: 2 });
    granted(sut.take({ userId: 'ada', turnId: 't1' }));
    granted(sut.take({ userId: 'ada', turnId: 't2' }));
    expect(sut.take({ userId: 'ada', turnId: 't3' })).toEqual({ refused: 'user', limit: 2 });
    expect(sut.take({ userId: 'ada' })).toEqual({ refused: 'user', limit: 2 });
    expect('release' in sut.take({ userId: 'bob' })).toBe(true);
  });

  it('caps each turn, leaving room for the same user in another turn', () => {
    const sut = slots({ perTurn: 1, perUser: 3 });
    const inTurn = granted(sut.take({ userId: 'ada', turnId: 't1' }));
    expect(sut.take({ userId: 'ada', turnId: 't1' })).toEqual({ refused: 'turn', limit: 1 });
    granted(sut.take({ userId: 'ada', turnId: 't2' }));
    inTurn();
    expect('release' in sut.take({ userId: 'ada', turnId: 't1' })).toBe(true);
  });

  it('names the turn first when several caps are full: its advice is the one a model can follow', () => {
    const sut = slots({ instance: 1, perUser: 1, perTurn: 1 });
    granted(sut.take({ userId: 'ada', turnId: 't1' }));
    expect(sut.take({ userId: 'ada', turnId: 't1' })).toEqual({ refused: 'turn', limit: 1 });
    expect(sut.take({ userId: 'ada', turnId: 't2' })).toEqual({ refused: 'user', limit: 1 });
    expect(sut.take({ userId: 'bob', turnId: 't3' })).toEqual({ refused: 'instance', limit: 1 });
  });

  it('counts a caller without a user or turn only against the instance; 0 means no cap of its own', () => {
    const sut = slots({ instance: 3, perUser: 0, perTurn: 0 });
    for (let i = 0; i < 3; i++) granted(sut.take({ userId: 'ada', turnId: 't1' }));
    expect(sut.take({})).toEqual({ refused: 'instance', limit: 3 });
  });

  it('releases once: a second release does not free another caller’s slot', () => {
    const sut = slots({ instance: 2, perUser: 1 });
    const release = granted(sut.take({ userId: 'ada' }));
    granted(sut.take({ userId: 'bob' }));
    release();
    release();
    expect(sut.running).toBe(1);
    expect(sut.take({ userId: 'bob' })).toEqual({ refused: 'user', limit: 1 });
  });
});
