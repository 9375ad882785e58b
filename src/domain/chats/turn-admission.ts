/**
 * Room for a turn on this instance (the server's TurnGate provides it): a token and a port of the
 * chat's own, so chat code does not know how the server counts turns or shuts down.
 */
export const TURN_ADMISSION = Symbol('SKILLHOST_TURN_ADMISSION');

/** Counts the turn out; calling it again does nothing. */
export type TurnRelease = () => void;

export interface TurnAdmission {
  /** Throws BUSY when a turn could not start now; for checks made before a turn's answer is committed to (a stream). */
  assertOpen(): void;
  /** Counts a turn in (or throws BUSY, see `assertOpen`) until the release is called. */
  enter(): TurnRelease;
}
