import { describe, expect, it } from '@jest/globals';
import { AppError, ErrorCode } from '@skillhost/core';
import type { AppConfig } from '../../config/app-config.js';
import { TurnGate } from './turn-gate.service.js';
import { LifecycleService } from './lifecycle.service.js';

/** A real turn gate (a plain class) with room for `maxConcurrentTurns` turns. */
function turnGate(maxConcurrentTurns = 4): TurnGate {
  return new TurnGate({ app: { limits: { maxConcurrentTurns } } } as unknown as AppConfig);
}

function build(gate = turnGate()) {
  return { sut: new LifecycleService(gate), gate };
}

function busyReason(gate: TurnGate): unknown {
  try {
    gate.enter();
  } catch (error) {
    if (!AppError.isInstance(error) || error.code !== ErrorCode.BUSY) throw error;
    return error.details?.reason;
  }
  return undefined;
}

describe(LifecycleService.name, () => {
  it('starts ready: not shutting down, the database not known to be down, the cut signal not aborted', () => {
    const { sut } = build();
    expect(sut.isReady).toBe(true);
    expect(sut.isShuttingDown).toBe(false);
    expect(sut.databaseDown).toBeUndefined();
    expect(sut.cutSignal.aborted).toBe(false);
  });

  describe('beginShutdown', () => {
    it('makes the process not ready and closes the turn gate: new turns are BUSY (shutting_down)', () => {
      const { sut, gate } = build();
      expect(busyReason(gate)).toBeUndefined();
      sut.beginShutdown();
      expect(sut.isShuttingDown).toBe(true);
      expect(sut.isReady).toBe(false);
      expect(busyReason(gate)).toBe('shutting_down');
    });

    it('lets the turns in flight go on: the gate still counts them out and becomes idle', async () => {
      const { sut, gate } = build();
      const release = gate.enter();
      sut.beginShutdown();
      expect(gate.inFlight).toBe(1);
      const idle = gate.whenIdle(5_000);
      release();
      await expect(idle).resolves.toBe(true);
    });

    it('does not abort the cut signal: only cutTurns does, once the grace period ends', () => {
      const { sut } = build();
      sut.beginShutdown();
      expect(sut.cutSignal.aborted).toBe(false);
      sut.cutTurns();
      expect(sut.cutSignal.aborted).toBe(true);
    });
  });

  describe('cutSignal', () => {
    it('is one signal for the whole life, aborted by cutTurns for everyone who took it before', () => {
      const { sut } = build();
      const taken = sut.cutSignal;
      const heard: string[] = [];
      taken.addEventListener('abort', () => heard.push('abort'));
      sut.cutTurns();
      expect(sut.cutSignal).toBe(taken);
      expect(heard).toEqual(['abort']);
    });
  });

  describe('database state', () => {
    it('is not ready while the database is down, with the reason; ready again once it is up', () => {
      const { sut } = build();
      sut.markDatabaseDown('the embedded PostgreSQL exited (code 1); restarting it');
      expect(sut.databaseDown).toBe('the embedded PostgreSQL exited (code 1); restarting it');
      expect(sut.isReady).toBe(false);
      expect(sut.isShuttingDown).toBe(false);
      sut.markDatabaseUp();
      expect(sut.databaseDown).toBeUndefined();
      expect(sut.isReady).toBe(true);
    });

    it('keeps the latest reason when the database is reported down again', () => {
      const { sut } = build();
      sut.markDatabaseDown('first');
      sut.markDatabaseDown('second');
      expect(sut.databaseDown).toBe('second');
    });

    it('stays not ready after shutdown began, whatever the database does', () => {
      const { sut } = build();
      sut.markDatabaseDown('restarting');
      sut.beginShutdown();
      sut.markDatabaseUp();
      expect(sut.isReady).toBe(false);
    });

    it('does not touch the turn gate: turns are refused by shutdown, not by a database outage', () => {
      const { sut, gate } = build();
      sut.markDatabaseDown('restarting');
      expect(busyReason(gate)).toBeUndefined();
    });
  });
});
