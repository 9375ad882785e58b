/**
 * Which process of a server this is. With `[app] workers = 1` the one process does everything; with more, the
 * primary (src/app/cluster-primary.ts) starts the embedded PostgreSQL and runs the migrations before it starts the
 * workers, and the first worker does the start-up work that must happen once (registering the bootstrap admin key).
 */
export interface ProcessRole {
  /** The cluster's id of this worker (1 for the first, a new one for each restart); undefined with no cluster. */
  worker: number | undefined;
  /** Whether this process applies pending migrations before it uses the database. */
  runsMigrations: boolean;
  /** Whether this process does the start-up work one process of the server does for all. */
  runsStartupTasks: boolean;
  /**
   * Whether this process runs the server's background work (due mirrors, the catalogue evals after a change, watching
   * the folders): every process of a server does, a command (`skillhost eval --level model`) that builds the same
   * services does not.
   */
  runsBackgroundWork: boolean;
}

export const SINGLE_PROCESS: ProcessRole = Object.freeze({
  worker: undefined,
  runsMigrations: true,
  runsStartupTasks: true,
  runsBackgroundWork: true,
});

/** A command of the CLI: it may migrate the database it works on, and runs none of a server's work. */
export const COMMAND_PROCESS: ProcessRole = Object.freeze({
  worker: undefined,
  runsMigrations: true,
  runsStartupTasks: false,
  runsBackgroundWork: false,
});

/** A worker of the cluster: the primary ran the migrations; the first worker does the once-only work. */
export function workerRole(id: number): ProcessRole {
  return Object.freeze({ worker: id, runsMigrations: false, runsStartupTasks: id === 1, runsBackgroundWork: true });
}

export const PROCESS_ROLE = Symbol('PROCESS_ROLE');
