/**
 * The write side of the SQLite store: one connection that commits groups of log rows and compaction steps,
 * each in a transaction of its own. It runs on a thread of its own for a database file (sqlite-writer-thread.ts)
 * and inline for an in-memory one (which a second thread could not open).
 *
 * On its own thread, a commit's fsync (synchronous=FULL) no longer stops the event loop: requests are served
 * meanwhile, and the writes they make form the next group, committed as soon as this one is done. The wait
 * for the disk is then shared by all the writes that came in during it, instead of blocking them all.
 */

import { DatabaseSync, type StatementSync } from 'node:sqlite';

/** A log row: see the log table in sqlite.ts. */
export type LogRow = [
  id: number,
  name: string,
  created: number,
  deleted: number,
  createRevision: number,
  prevRevision: number,
  value: string,
];

export type WriterRequest =
  | { kind: 'group'; rows: LogRow[] }
  | { kind: 'compact'; from: number; to: number }
  | { kind: 'checkpoint' }
  | { kind: 'synchronous' };

/** A failure as it crosses threads: SQLite's error code survives, which a structured clone would drop. */
export interface WriterFailure {
  message: string;
  errcode?: number;
}

export interface WriterOptions {
  synchronous: 'FULL' | 'NORMAL';
  busyTimeoutMs: number;
}

export class SqliteWriter {
  readonly #db: DatabaseSync;
  readonly #begin: StatementSync;
  readonly #commit: StatementSync;
  readonly #rollback: StatementSync;
  readonly #insert: StatementSync;
  readonly #compactSuperseded: StatementSync;
  readonly #compactTombstones: StatementSync;
  readonly #setMeta: StatementSync;

  /** Opens its own connection to `path`, or takes the store's connection (for an in-memory database). */
  constructor(database: string | DatabaseSync, options: WriterOptions) {
    const db =
      typeof database === 'string'
        ? new DatabaseSync(database, { timeout: options.busyTimeoutMs })
        : database;
    this.#db = db;
    try {
      // Per connection, not stored in the file: this is the connection whose commits must be durable.
      db.exec(`PRAGMA synchronous = ${options.synchronous}`);
      this.#begin = db.prepare('BEGIN IMMEDIATE');
      this.#commit = db.prepare('COMMIT');
      this.#rollback = db.prepare('ROLLBACK');
      // The id is given rather than generated so a create can record it as its own create_revision in one
      // statement; it also makes a write from an unexpected second writer fail on the primary key.
      this.#insert = db.prepare(
        'INSERT INTO log (id, name, created, deleted, create_revision, prev_revision, value) VALUES (?, ?, ?, ?, ?, ?, ?)',
      );
      this.#compactSuperseded = db.prepare(
        'DELETE FROM log WHERE id IN (SELECT prev_revision FROM log WHERE id > ?1 AND id <= ?2 AND prev_revision > 0)',
      );
      this.#compactTombstones = db.prepare('DELETE FROM log WHERE id > ?1 AND id <= ?2 AND deleted = 1');
      this.#setMeta = db.prepare(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      );
    } catch (err) {
      if (typeof database === 'string') db.close();
      throw err;
    }
  }

  /** Carries out one request; throws what SQLite threw, after rolling back what it began. */
  apply(request: WriterRequest): number | string | undefined {
    switch (request.kind) {
      case 'group':
        this.#transact(() => {
          for (const row of request.rows) this.#insert.run(...row);
        });
        return undefined;
      case 'compact':
        this.#transact(() => {
          this.#compactSuperseded.run(request.from, request.to);
          this.#compactTombstones.run(request.from, request.to);
          this.#setMeta.run('compact_revision', request.to);
        });
        return undefined;
      case 'checkpoint':
        // Deleted pages only shrink the WAL at a checkpoint; TRUNCATE also resets the file (as kine does).
        this.#db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
        return undefined;
      case 'synchronous':
        return (this.#db.prepare('PRAGMA synchronous').get() as { synchronous: number }).synchronous;
    }
  }

  close(): void {
    this.#db.close();
  }

  #transact(fn: () => void): void {
    this.#begin.run();
    try {
      fn();
      this.#commit.run();
    } catch (err) {
      // SQLite rolls back by itself after some errors (e.g. I/O); a second ROLLBACK would throw.
      if (this.#db.isTransaction) this.#rollback.run();
      throw err;
    }
  }
}

export function toFailure(err: unknown): WriterFailure {
  const errcode = (err as { errcode?: unknown } | null)?.errcode;
  return {
    message: err instanceof Error ? err.message : String(err),
    ...(typeof errcode === 'number' ? { errcode } : {}),
  };
}
