/**
 * Embedded MVCC storage on SQLite, after kine's model (k3s-io/kine): one append-only log table whose row id is
 * the revision. Every write appends a row; reads at revision R take, per key, the newest row with id <= R.
 *
 * Unlike kine we are the only writer, so watches are fed by an in-process broadcast on commit instead of polling
 * the table, and the current revision is kept in memory. Opening the same database from two processes (or two
 * SqliteStorage instances) at once is unsupported: the second writer would be detected when it commits its first
 * clashing insert (failing that group), but watchers of the first would never see its writes. The CLI locks the
 * data dir against a second server.
 *
 * Writes are committed in groups, by a writer with a connection of its own, on a thread of its own
 * (sqlite-writer.ts). Writes made while the writer commits a group join the open group, which goes to the writer
 * as soon as it is free (and not before the turn of the event loop that opened it has ended); only once its
 * group has committed is a write acknowledged and broadcast. A commit (appending the changed pages to the WAL,
 * fsyncing it with synchronous=FULL, checkpointing now and then) costs far more than the write itself: shared
 * pages are written, and the disk waited for, once per group instead of once per write, and the event loop
 * serves requests meanwhile. Reads and history only see committed revisions, so nothing uncommitted is ever
 * visible outside the writes themselves; a get of a key with an uncommitted write waits for its group, so it
 * answers as a read made after that write (a retry after a conflict sees what it conflicted with).
 *
 * The newest rows of recently written keys are also kept in memory (latest-rows.ts), so that reading an object
 * just written, and checking the revision an update is guarded by, need no query.
 */

import { Buffer } from 'node:buffer';
import { closeSync, openSync } from 'node:fs';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { EventDelivery } from './delivery.ts';
import { type LatestRow, LatestRows } from './latest-rows.ts';
import { type LogRow, SqliteWriter, type WriterFailure, type WriterRequest } from './sqlite-writer.ts';
import { InlineWriter, ThreadWriter, type WriterClient } from './sqlite-writer-client.ts';
import { WrittenNames } from './written-names.ts';
import {
  type CommitStats,
  CompactedError,
  ConflictError,
  FutureRevisionError,
  KeyExistsError,
  type KeyValue,
  NotFoundError,
  type RangeOptions,
  type RangeResult,
  type Storage,
  StorageError,
  type StorageEvent,
  type StorageWatch,
  UnavailableError,
  type WatchListener,
} from './types.ts';

export type SqliteSynchronous = 'FULL' | 'NORMAL';

export interface SqliteStorageOptions {
  /** How long a statement waits for a lock held by another connection, in ms (default 5000). */
  busyTimeoutMs?: number;
  /**
   * SQLite's synchronous pragma (default FULL). FULL fsyncs the WAL before a commit returns, so a write is
   * acknowledged only once it would survive a power loss, as etcd does; one fsync per group commit keeps the
   * cost low. NORMAL leaves the fsync to checkpoints: the database is never corrupted, but a power loss (not a
   * process crash) may lose the last acknowledged writes.
   */
  synchronous?: SqliteSynchronous;
  /** History rows a catching-up watch reads per step before yielding to the event loop (default 500). */
  watchBatchSize?: number;
  /** Revisions compacted per transaction, so that writers are not held up for long (default 1000). */
  compactBatchSize?: number;
  /** Characters of values kept in memory as the newest rows of recently written keys (default 4 Mi). */
  latestRowsChars?: number;
}

/**
 * Version 2 dropped AUTOINCREMENT from the log table. Version 1 files are served as they are (their sequence
 * table is kept up to date by SQLite), and version 2 tells binaries that expect the sequence table to refuse
 * the file rather than fail on it.
 */
const SCHEMA_VERSION = 2;
const SUPPORTED_VERSIONS = [1, SCHEMA_VERSION];

// The id is the revision. It is given on insert rather than generated (no AUTOINCREMENT, whose sequence table
// would be one more page written by every commit), and a second writer of the file fails on it: its next id is
// one this writer already used. prev_revision is the id of the key's previous row (0 for the first).
// There is no old_value column (kine has one): an event's previous value is the row at prev_revision, which
// compaction keeps for as long as the event itself can still be delivered (see compact()).
// One index serves every read by name; each index costs a page write per write, so there is no other.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS log (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  created INTEGER NOT NULL,
  deleted INTEGER NOT NULL,
  create_revision INTEGER NOT NULL,
  prev_revision INTEGER NOT NULL,
  value TEXT NOT NULL
);
-- deleted rides along so that counting and the superseded-row check never touch the table (and its values).
CREATE INDEX IF NOT EXISTS log_name_id_deleted ON log (name, id, deleted);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
-- Databases made before the above had a UNIQUE (name, prev_revision) index against forked histories; the
-- primary key catches a second writer as well, for a page write less per write.
DROP INDEX IF EXISTS log_name_prev_revision;
`;

// The newest row per name at revision ?3 is the one with no later row at or before ?3. Scanning the name index
// yields rows in key order, so LIMIT stops the scan early; INDEXED BY keeps the planner from preferring a
// rowid range scan on id <= ?3, which would read the whole table.
const VISIBLE_AT = `
FROM log AS k INDEXED BY log_name_id_deleted
WHERE k.name >= ?1 AND k.name < ?2 AND k.id <= ?3 AND k.deleted = 0
  AND NOT EXISTS (
    SELECT 1 FROM log AS n INDEXED BY log_name_id_deleted WHERE n.name = k.name AND n.id > k.id AND n.id <= ?3
  )`;

/**
 * The store's revision as the file records it: its newest row, or the compacted revision when compaction
 * removed the newest row (a tombstone), so that no revision is ever handed out twice. An empty store is at
 * revision 1, as in etcd: 0 would be indistinguishable from Kubernetes' resourceVersion "0" ("any").
 * Databases from before the sequence table was dropped keep AUTOINCREMENT, whose sequence is read too.
 */
function storedRevision(db: DatabaseSync, compactedRevision: number): number {
  const newest = (db.prepare('SELECT max(id) AS id FROM log').get() as { id: number | null }).id ?? 0;
  const hasSequence = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'")
    .get();
  const sequence = hasSequence
    ? ((db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'log'").get() as { seq: number } | undefined)
        ?.seq ?? 0)
    : 0;
  return Math.max(newest, sequence, compactedRevision, 1);
}

/**
 * Creates the database file owner-only (0600) unless it exists. SQLite would create it 0644 less the umask,
 * and it gives the -wal and -shm files it creates (and recreates, after a restart) the database file's mode,
 * whatever the umask: so this one file decides who can read every value, Secrets included.
 */
function createOwnerOnly(path: string): void {
  closeSync(openSync(path, 'a', 0o600));
}

/** Sorts after every TEXT value in SQLite, so it bounds the range of the empty prefix. */
const AFTER_ALL_TEXT = new Uint8Array([0xff]);

/** Exclusive upper bound of the keys starting with prefix, in SQLite's (UTF-8 byte) order. */
function prefixEnd(prefix: string): string | Uint8Array {
  // UTF-8 preserves code-point order, so bumping the last code point gives the byte-order successor.
  const points = Array.from(prefix);
  while (points.length > 0) {
    const last = points.pop()!.codePointAt(0)!;
    if (last < 0x10ffff) {
      return points.join('') + String.fromCodePoint(last === 0xd7ff ? 0xe000 : last + 1);
    }
  }
  return AFTER_ALL_TEXT;
}

/** Compares as SQLite does (bytes of UTF-8), which differs from JS's UTF-16 order for astral characters. */
function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

type HistoryRow = [
  id: number,
  name: string,
  created: number,
  deleted: number,
  createRevision: number,
  value: string,
  prevValue: string | null,
];

type RangeRow<V = string> = [name: string, id: number, createRevision: number, value: V];

/**
 * A statement whose rows come back as arrays (no object per row, no key per column). Set on the statement, not
 * as a `prepare` option: Node.js 22 ignores that option and would hand back objects.
 */
function prepareArrays(db: DatabaseSync, sql: string): StatementSync {
  const statement = db.prepare(sql);
  statement.setReturnArrays(true);
  return statement;
}

function toKeyValue(key: string, row: LatestRow): KeyValue {
  return { key, value: row.value, modRevision: row.id, createRevision: row.create_revision };
}

const SQLITE_CONSTRAINT = 19;

/** The store's error for a writer's failure: a clash with another writer of the file is told apart. */
function toStorageError(failure: WriterFailure, group: Group): StorageError {
  // Extended result codes (SQLITE_CONSTRAINT_UNIQUE, _PRIMARYKEY) keep the primary code in the low byte.
  if (failure.errcode !== undefined && (failure.errcode & 0xff) === SQLITE_CONSTRAINT) {
    const keys = [...group.latest.keys()].slice(0, 3).join(', ');
    return new StorageError(
      `write to ${keys} clashed with another writer of the database: ${failure.message}`,
    );
  }
  return new StorageError(failure.message);
}

/** A write in a group, acknowledged (or failed) when the group commits. */
interface PendingWrite {
  event: StorageEvent;
  resolve(event: StorageEvent): void;
  reject(err: unknown): void;
}

/** Writes committed together: the open group collects them while the one before it commits. */
interface Group {
  writes: PendingWrite[];
  rows: LogRow[];
  /** Each key's newest row in this group, tombstones included: what later writes of the key build on. */
  latest: Map<string, LatestRow>;
  /** Set once the turn that opened the group has ended: from then on it may be sent to the writer. */
  ready: boolean;
}

/** Refusals decided before anything is written: they leave the group as it was. */
function isRefusal(err: unknown): boolean {
  return err instanceof KeyExistsError || err instanceof NotFoundError || err instanceof ConflictError;
}

interface HistoryBatch {
  events: StorageEvent[];
  /** False when the batch was full and more history may follow. */
  complete: boolean;
}

/** What a watch needs from its store; closures rather than public members keep the store's API the contract's. */
interface WatchSource {
  readHistory(prefix: string, end: string | Uint8Array, afterRevision: number): HistoryBatch;
  revision(): number;
  compactedRevision(): number;
  closed(): boolean;
  remove(watch: SqliteWatch): void;
}

/** A request for the writer other than a group, waiting for its turn. */
interface QueuedRequest {
  request: WriterRequest;
  done: PromiseWithResolvers<number | string | undefined>;
}

/** Databases without a file of their own, which only the store's connection can reach. */
function isInMemory(path: string): boolean {
  return path === '' || path === ':memory:' || path.startsWith('file:');
}

export class SqliteStorage implements Storage {
  /** Its watches see every write of this process, the only one on the file (SqliteWatch.offer). */
  readonly progressOnEveryWrite = true;
  readonly #db: DatabaseSync;
  readonly #writer: WriterClient;
  readonly #watchBatchSize: number;
  readonly #compactBatchSize: number;
  /** The committed revision: what reads, history and watchers see. */
  #revision: number;
  /** The revision of the last write, committed or not (>= #revision). */
  #lastRevision: number;
  /** The group collecting writes; sent to the writer once its turn ended and the writer is free. */
  #open: Group | undefined;
  /** The group the writer is committing. */
  #committing: Group | undefined;
  /** Whether the writer is carrying out a request (a group or a queued one). */
  #writerBusy = false;
  readonly #queued: QueuedRequest[] = [];
  /** The newest rows (committed or not) of recently written live keys; tombstones are never kept. */
  readonly #latestRows: LatestRows;
  /** A superset of the names with a row in the log: a create of a name outside it reads nothing. */
  readonly #writtenNames = new WrittenNames();
  /** Settles whenever a group committed or failed, for reads of its keys (created on demand). */
  #groupEnd: PromiseWithResolvers<void> | undefined;
  #dispatchScheduled = false;
  readonly #commitStats: CommitStats = { groups: 0, writes: 0, commitSeconds: 0 };
  #compactedRevision: number;
  /** The revision a compaction step in progress compacts to (0 when none is). */
  #compactingTo = 0;
  /** Compactions run one after the other: each reads the watermark the one before it left. */
  #compaction: Promise<void> = Promise.resolve();
  #closed = false;
  #closing: Promise<void> | undefined;
  readonly #watchers = new Set<SqliteWatch>();
  readonly #source: WatchSource = {
    readHistory: (prefix, end, afterRevision) => this.#readHistory(prefix, end, afterRevision),
    revision: () => this.#revision,
    compactedRevision: () => this.#readableFrom(),
    closed: () => this.#closed,
    remove: (watch) => this.#watchers.delete(watch),
  };

  readonly #latest: StatementSync;
  readonly #names: StatementSync;
  readonly #latestCommitted: StatementSync;
  readonly #range: StatementSync;
  readonly #rangeBytes: StatementSync;
  readonly #count: StatementSync;
  readonly #history: StatementSync;

  static open(path: string, options: SqliteStorageOptions = {}): SqliteStorage {
    return new SqliteStorage(path, options);
  }

  private constructor(path: string, options: SqliteStorageOptions) {
    this.#watchBatchSize = options.watchBatchSize ?? 500;
    this.#compactBatchSize = options.compactBatchSize ?? 1000;
    this.#latestRows = new LatestRows(options.latestRowsChars ?? 4 * 1024 * 1024);
    const inMemory = isInMemory(path);
    if (!inMemory) createOwnerOnly(path);
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    const synchronous = options.synchronous === 'NORMAL' ? 'NORMAL' : 'FULL';
    const db = new DatabaseSync(path, { timeout: busyTimeoutMs });
    this.#db = db;
    try {
      db.exec('PRAGMA journal_mode = WAL');
      db.exec(`PRAGMA synchronous = ${synchronous}`);
      db.exec('BEGIN IMMEDIATE');
      try {
        const version = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
        if (version !== 0 && !SUPPORTED_VERSIONS.includes(version)) {
          throw new StorageError(
            `${path}: unsupported schema version ${version} (expected ${SCHEMA_VERSION})`,
          );
        }
        db.exec(SCHEMA);
        if (version === 0) db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
        db.exec('COMMIT');
      } catch (err) {
        db.exec('ROLLBACK');
        throw err;
      }
      const compacted = db.prepare("SELECT value FROM meta WHERE key = 'compact_revision'").get() as
        { value: number } | undefined;
      this.#compactedRevision = compacted?.value ?? 0;
      this.#revision = storedRevision(db, this.#compactedRevision);
      this.#lastRevision = this.#revision;

      this.#latest = db.prepare(
        'SELECT id, create_revision, deleted, value FROM log WHERE name = ? ORDER BY id DESC LIMIT 1',
      );
      // Reads see acknowledged revisions only: a group the writer is committing is not there yet.
      this.#latestCommitted = db.prepare(
        'SELECT id, create_revision, deleted, value FROM log WHERE name = ? AND id <= ? ORDER BY id DESC LIMIT 1',
      );
      this.#range = prepareArrays(
        db,
        `SELECT k.name, k.id, k.create_revision, k.value ${VISIBLE_AT} ORDER BY k.name LIMIT ?4`,
      );
      // The stored TEXT as its UTF-8 bytes (the database's encoding): a BLOB is returned as a Uint8Array.
      this.#rangeBytes = prepareArrays(
        db,
        `SELECT k.name, k.id, k.create_revision, CAST(k.value AS BLOB) ${VISIBLE_AT} ORDER BY k.name LIMIT ?4`,
      );
      this.#count = prepareArrays(db, `SELECT count(*) ${VISIBLE_AT}`);
      // Every name of the log, once at opening and when the set of written names is rebuilt (the name index).
      this.#names = prepareArrays(db, 'SELECT DISTINCT name FROM log');
      this.#writtenNames.rebuild(this.#fileNames());
      // Rowid order, not the name index: a watch usually catches up on a short tail of a long log. The previous
      // value is joined only for updates; a tombstone carries the deleted value itself.
      this.#history = prepareArrays(
        db,
        `SELECT k.id, k.name, k.created, k.deleted, k.create_revision, k.value, p.value
         FROM log AS k NOT INDEXED
         LEFT JOIN log AS p ON p.id = k.prev_revision AND k.created = 0 AND k.deleted = 0
         WHERE k.id > ?1 AND k.id <= ?5 AND k.name >= ?2 AND k.name < ?3
         ORDER BY k.id LIMIT ?4`,
      );
      const writerOptions = { synchronous, busyTimeoutMs } as const;
      this.#writer = inMemory
        ? new InlineWriter(new SqliteWriter(db, writerOptions))
        : new ThreadWriter(path, writerOptions);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /** PRAGMA synchronous as the writer's connection reports it: 2 is FULL, 1 NORMAL. */
  async synchronous(): Promise<number> {
    this.#checkOpen();
    return Number(await this.#request({ kind: 'synchronous' }));
  }

  commitStats(): CommitStats {
    return { ...this.#commitStats };
  }

  async currentRevision(): Promise<number> {
    this.#checkOpen();
    return this.#revision;
  }

  async compactedRevision(): Promise<number> {
    this.#checkOpen();
    return this.#compactedRevision;
  }

  async get(key: string): Promise<KeyValue | undefined> {
    this.#checkOpen();
    // A write of the key is not committed yet: answer as a read made after it (a retry after a conflict then
    // sees what it conflicted with). Only that write is waited for, not the ones after it: a key written in
    // every group would keep a read waiting forever.
    const unwritten = this.#pendingRow(key)?.id;
    while (unwritten !== undefined && this.#revision < unwritten && this.#pendingRow(key) !== undefined) {
      this.#groupEnd ??= Promise.withResolvers();
      await this.#groupEnd.promise;
      this.#checkOpen();
    }
    let row = this.#latestRow(key);
    // A newer write of the key is in a group that has not committed: reads see committed revisions only.
    if (row !== undefined && row.id > this.#revision) {
      row = this.#latestCommitted.get(key, this.#revision) as LatestRow | undefined;
    }
    return row === undefined || row.deleted ? undefined : toKeyValue(key, row);
  }

  async range(prefix: string, options: RangeOptions = {}): Promise<RangeResult> {
    return this.#rangeWith<string>(this.#range, prefix, options);
  }

  async rangeBytes(prefix: string, options: RangeOptions = {}): Promise<RangeResult<Uint8Array>> {
    return this.#rangeWith<Uint8Array>(this.#rangeBytes, prefix, options);
  }

  #rangeWith<V>(statement: StatementSync, prefix: string, options: RangeOptions): RangeResult<V> {
    this.#checkOpen();
    const revision = options.revision && options.revision > 0 ? options.revision : this.#revision;
    if (revision > this.#revision) {
      throw new FutureRevisionError(
        revision,
        `required revision ${revision} is a future revision (current ${this.#revision})`,
      );
    }
    if (revision < this.#readableFrom()) throw new CompactedError(revision, this.#readableFrom());
    const end = prefixEnd(prefix);
    const start = options.startKey && compareKeys(options.startKey, prefix) > 0 ? options.startKey : prefix;
    const limit = options.limit && options.limit > 0 ? options.limit : 0;
    // One extra row tells whether more remain without a second query.
    const rows = statement.all(start, end, revision, limit > 0 ? limit + 1 : -1) as unknown as RangeRow<V>[];
    const more = limit > 0 && rows.length > limit;
    const n = more ? limit : rows.length;
    const kvs: KeyValue<V>[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const row = rows[i];
      kvs[i] = { key: row[0], value: row[3], modRevision: row[1], createRevision: row[2] };
    }
    const result: RangeResult<V> = { kvs, revision, more };
    if (options.count) {
      result.count = more ? ((this.#count.get(start, end, revision) as unknown as [number])[0] ?? 0) : n;
    }
    return result;
  }

  async create(key: string, value: string): Promise<number> {
    this.#checkOpen();
    const event = await this.#write((): StorageEvent => {
      const latest = this.#latestRow(key);
      if (latest !== undefined && !latest.deleted) throw new KeyExistsError(key);
      const revision = this.#lastRevision + 1;
      this.#append(revision, key, 1, 0, revision, latest?.id ?? 0, value);
      return { type: 'PUT', key, value, revision, createRevision: revision, created: true };
    });
    return event.revision;
  }

  async update(key: string, value: string, expectedRevision: number): Promise<number> {
    this.#checkOpen();
    const event = await this.#write((): StorageEvent => {
      const latest = this.#currentOrThrow(key, expectedRevision);
      const revision = this.#lastRevision + 1;
      this.#append(revision, key, 0, 0, latest.create_revision, latest.id, value);
      return {
        type: 'PUT',
        key,
        value,
        revision,
        createRevision: latest.create_revision,
        prevValue: latest.value,
        created: false,
      };
    });
    return event.revision;
  }

  async delete(key: string, expectedRevision?: number): Promise<{ revision: number; prev: KeyValue }> {
    this.#checkOpen();
    let prev: KeyValue | undefined;
    const event = await this.#write((): StorageEvent => {
      const latest = this.#currentOrThrow(key, expectedRevision);
      prev = toKeyValue(key, latest);
      const revision = this.#lastRevision + 1;
      // The tombstone keeps the deleted value: it is the DELETE event's value.
      this.#append(revision, key, 0, 1, latest.create_revision, latest.id, latest.value);
      return {
        type: 'DELETE',
        key,
        value: latest.value,
        revision,
        createRevision: latest.create_revision,
        prevValue: latest.value,
        created: false,
      };
    });
    return { revision: event.revision, prev: prev! };
  }

  watch(prefix: string, afterRevision: number, listener: WatchListener): StorageWatch {
    const watch = new SqliteWatch(this.#source, prefix, Math.max(0, afterRevision), listener);
    if (this.#closed) {
      watch.fail(new UnavailableError('storage is closed'));
    } else {
      this.#watchers.add(watch);
      watch.start();
    }
    return watch;
  }

  /**
   * Removes every row superseded at or before the revision and every tombstone at or before it. A row newer than
   * the revision is never removed, nor is the row it superseded, so reads at >= revision and watches after it
   * (including their previous values) are unaffected. Compacting to or below the compacted revision is a no-op.
   */
  async compact(revision: number): Promise<void> {
    this.#checkOpen();
    if (revision > this.#revision) {
      throw new StorageError(`cannot compact to future revision ${revision} (current ${this.#revision})`);
    }
    const run = this.#compaction.then(() => this.#compactTo(revision));
    this.#compaction = run.catch(() => {});
    return run;
  }

  async #compactTo(revision: number): Promise<void> {
    let compacted = false;
    while (this.#compactedRevision < revision) {
      this.#checkOpen();
      const from = this.#compactedRevision;
      const to = Math.min(revision, from + this.#compactBatchSize);
      // While the writer deletes, reads and watches from the revisions it deletes are refused rather than
      // answered from a half-compacted log.
      this.#compactingTo = to;
      try {
        await this.#request({ kind: 'compact', from, to });
      } finally {
        this.#compactingTo = 0;
      }
      this.#compactedRevision = to;
      compacted = true;
    }
    if (compacted && !this.#closed) await this.#request({ kind: 'checkpoint' });
    // Compaction is when names leave the file (a deleted key's last rows): the set forgets them here.
    if (compacted && !this.#closed && this.#writtenNames.rebuildDue) this.#rebuildWrittenNames();
  }

  /** The names with a row in the file, read from its name index. */
  *#fileNames(): Generator<string> {
    for (const [name] of this.#names.iterate() as Iterable<[string]>) yield name;
  }

  /** The set of written names again from the file, with the names of groups not committed yet. */
  #rebuildWrittenNames(): void {
    const pending = [...(this.#open?.latest.keys() ?? []), ...(this.#committing?.latest.keys() ?? [])];
    this.#writtenNames.rebuild(
      (function* (file: Iterable<string>) {
        yield* file;
        yield* pending;
      })(this.#fileNames()),
    );
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    // Writes of the open group are committed (and acknowledged) rather than lost.
    if (this.#open) this.#open.ready = true;
    this.#dispatch();
    while (this.#writerBusy) {
      this.#groupEnd ??= Promise.withResolvers();
      await this.#groupEnd.promise;
    }
    const err = new UnavailableError('storage is closed');
    for (const watch of this.#watchers) watch.fail(err);
    this.#watchers.clear();
    this.#latestRows.clear();
    await this.#writer.close();
    this.#db.close();
  }

  #readHistory(prefix: string, end: string | Uint8Array, afterRevision: number): HistoryBatch {
    const rows = this.#history.all(
      afterRevision,
      prefix,
      end,
      this.#watchBatchSize,
      this.#revision,
    ) as unknown as HistoryRow[];
    const events: StorageEvent[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const [id, name, created, deleted, createRevision, value, prevValue] = rows[i];
      const event: StorageEvent = {
        type: deleted ? 'DELETE' : 'PUT',
        key: name,
        value,
        revision: id,
        createRevision,
        created: created === 1,
      };
      if (deleted) event.prevValue = value;
      else if (prevValue !== null) event.prevValue = prevValue;
      events[i] = event;
    }
    return { events, complete: rows.length < this.#watchBatchSize };
  }

  /** The oldest revision reads can be answered at: the compacted one, or the one being compacted to. */
  #readableFrom(): number {
    return Math.max(this.#compactedRevision, this.#compactingTo);
  }

  #checkOpen(): void {
    if (this.#closed) throw new UnavailableError('storage is closed');
  }

  /** The key's newest row in a group that has not committed yet. */
  #pendingRow(key: string): LatestRow | undefined {
    return this.#open?.latest.get(key) ?? this.#committing?.latest.get(key);
  }

  /** The key's newest row, committed or not. */
  #latestRow(key: string): LatestRow | undefined {
    const pending = this.#pendingRow(key);
    if (pending !== undefined) return pending;
    const kept = this.#latestRows.get(key);
    if (kept !== undefined) return kept;
    // A name never written has no row: no read (the first read after a commit costs the most, ADR 1170).
    if (!this.#writtenNames.mayHave(key)) return undefined;
    const row = this.#latest.get(key) as LatestRow | undefined;
    if (row !== undefined && !row.deleted) this.#latestRows.set(key, row);
    return row;
  }

  /** The key's live row, checked against the expected revision (when one is given). */
  #currentOrThrow(key: string, expectedRevision: number | undefined): LatestRow {
    const latest = this.#latestRow(key);
    if (latest === undefined || latest.deleted) throw new NotFoundError(key);
    if (expectedRevision !== undefined && latest.id !== expectedRevision) {
      throw new ConflictError(key, toKeyValue(key, latest));
    }
    return latest;
  }

  /** Adds a row to the open group. */
  #append(
    id: number,
    key: string,
    created: number,
    deleted: number,
    createRevision: number,
    prevRevision: number,
    value: string,
  ): void {
    // Checked here, where the write can still fail alone: the writer would fail the whole group on it.
    if (typeof key !== 'string' || typeof value !== 'string') {
      throw new StorageError(`cannot store ${typeof value} at ${String(key)}: keys and values are text`);
    }
    const group = this.#open!;
    group.rows.push([id, key, created, deleted, createRevision, prevRevision, value]);
    this.#writtenNames.add(key);
    const row: LatestRow = { id, create_revision: createRevision, deleted, value };
    group.latest.set(key, row);
    if (deleted) this.#latestRows.delete(key);
    else this.#latestRows.set(key, row);
  }

  /**
   * Makes one write in the open group (opening one if there is none) and resolves once the group committed.
   * A refusal (the key exists, is missing or moved on) writes nothing and leaves the group as it was; any
   * other failure fails the whole open group, so an exception never leaves half a write.
   */
  #write(build: () => StorageEvent): Promise<StorageEvent> {
    const group: Group = (this.#open ??= { writes: [], rows: [], latest: new Map(), ready: false });
    this.#scheduleDispatch();
    let event: StorageEvent;
    try {
      event = build();
    } catch (err) {
      if (!isRefusal(err)) this.#failGroups([group], err);
      return Promise.reject(err);
    }
    this.#lastRevision = event.revision;
    return new Promise((resolve, reject) => group.writes.push({ event, resolve, reject }));
  }

  /** At the end of this turn the open group is complete enough to go: every write the turn made is in. */
  #scheduleDispatch(): void {
    if (this.#dispatchScheduled) return;
    this.#dispatchScheduled = true;
    setImmediate(() => {
      this.#dispatchScheduled = false;
      if (this.#open) this.#open.ready = true;
      this.#dispatch();
    });
  }

  /**
   * Hands the writer its next request once it is free: the open group if its turn has ended, else a queued
   * request. Writes made while the writer commits a group all go into the next group.
   */
  #dispatch(): void {
    if (this.#writerBusy) return;
    const group = this.#open;
    if (group?.ready) {
      this.#open = undefined;
      // A group whose every write was refused has nothing to commit.
      if (group.writes.length > 0) {
        this.#committing = group;
        this.#writerBusy = true;
        const sent = performance.now();
        const counted = () => {
          this.#commitStats.groups++;
          this.#commitStats.writes += group.writes.length;
          this.#commitStats.commitSeconds += (performance.now() - sent) / 1000;
        };
        this.#writer.send({ kind: 'group', rows: group.rows }).then(
          () => {
            counted();
            this.#committed(group);
          },
          (failure: WriterFailure) => {
            counted();
            this.#groupFailed(group, failure);
          },
        );
        return;
      }
    }
    const next = this.#queued.shift();
    if (next === undefined) return;
    this.#writerBusy = true;
    this.#writer.send(next.request).then(
      (value) => {
        this.#writerBusy = false;
        next.done.resolve(value);
        this.#endGroup();
        this.#dispatch();
      },
      (failure: WriterFailure) => {
        this.#writerBusy = false;
        next.done.reject(new StorageError(failure.message));
        this.#endGroup();
        this.#dispatch();
      },
    );
  }

  /** Runs a request other than a group on the writer, in turn with the groups. */
  #request(request: WriterRequest): Promise<number | string | undefined> {
    const done = Promise.withResolvers<number | string | undefined>();
    this.#queued.push({ request, done });
    this.#dispatch();
    return done.promise;
  }

  /** Publishes and acknowledges a committed group's writes, in revision order. */
  #committed(group: Group): void {
    this.#writerBusy = false;
    this.#committing = undefined;
    this.#publish(group.writes.map((write) => write.event));
    for (const write of group.writes) write.resolve(write.event);
    this.#endGroup();
    this.#dispatch();
  }

  /** A group the writer could not commit: the open group, which may build on it, fails with it. */
  #groupFailed(group: Group, failure: WriterFailure): void {
    this.#writerBusy = false;
    this.#committing = undefined;
    const err = toStorageError(failure, group);
    this.#failGroups(this.#open ? [group, this.#open] : [group], err);
    this.#dispatch();
  }

  /**
   * Fails the writes of groups that will never commit: none of them happened, and their revisions are free
   * again. Only the open group, or the committing group with the open one, can fail: the revisions that
   * remain used are those of the groups before.
   */
  #failGroups(groups: Group[], err: unknown): void {
    for (const group of groups) {
      if (group === this.#open) this.#open = undefined;
      for (const key of group.latest.keys()) this.#latestRows.delete(key);
    }
    this.#lastRevision = this.#committing?.writes.at(-1)?.event.revision ?? this.#revision;
    for (const group of groups) for (const write of group.writes) write.reject(err);
    this.#endGroup();
  }

  /** Lets the reads that waited for a group go on. */
  #endGroup(): void {
    this.#groupEnd?.resolve();
    this.#groupEnd = undefined;
  }

  /**
   * Records a committed group and hands its events, in revision order, to the watchers, which deliver them
   * later (never synchronously). One call per watcher and group: every watcher sees every write.
   */
  #publish(events: StorageEvent[]): void {
    this.#revision = events[events.length - 1].revision;
    for (const watch of this.#watchers) watch.offer(events);
  }
}

/**
 * A watch first replays history from the table, a batch per event-loop turn, then follows the broadcast. The switch
 * happens in the same synchronous turn as the read that found no more history, so the first live event is exactly
 * the one after the last row read: no gap, no duplicate.
 */
class SqliteWatch implements StorageWatch {
  readonly #source: WatchSource;
  readonly #prefix: string;
  readonly #end: string | Uint8Array;
  readonly #delivery: EventDelivery;
  /** The highest revision queued or known to hold nothing for this watch. */
  #cursor: number;
  #live = false;

  constructor(source: WatchSource, prefix: string, afterRevision: number, listener: WatchListener) {
    this.#source = source;
    this.#prefix = prefix;
    this.#end = prefixEnd(prefix);
    this.#cursor = afterRevision;
    this.#delivery = new EventDelivery(listener, () => source.remove(this));
  }

  start(): void {
    queueMicrotask(() => this.#catchUp());
  }

  offer(events: StorageEvent[]): void {
    if (!this.#live || !this.#delivery.active) return;
    // We see every write, so changes elsewhere tell this watch it is current up to their revision: one
    // mark for each run of them (consecutive marks would collapse into the last anyway).
    let progress = 0;
    for (const event of events) {
      if (event.revision <= this.#cursor) continue;
      this.#cursor = event.revision;
      if (!event.key.startsWith(this.#prefix)) {
        progress = event.revision;
        continue;
      }
      if (progress > 0) this.#delivery.pushProgress(progress);
      progress = 0;
      this.#delivery.push(event);
    }
    if (progress > 0) this.#delivery.pushProgress(progress);
  }

  /** Ends the watch with an error, after the events already queued. */
  fail(err: Error): void {
    this.#delivery.fail(err);
  }

  close(): void {
    this.#delivery.close();
  }

  #catchUp(): void {
    if (!this.#delivery.active) return;
    if (this.#source.closed()) {
      this.fail(new UnavailableError('storage is closed'));
      return;
    }
    const compacted = this.#source.compactedRevision();
    if (this.#cursor < compacted) {
      this.fail(new CompactedError(this.#cursor, compacted));
      return;
    }
    const { events, complete } = this.#source.readHistory(this.#prefix, this.#end, this.#cursor);
    if (events.length > 0) this.#cursor = events[events.length - 1].revision;
    const delivered = this.#cursor;
    if (complete) {
      this.#cursor = Math.max(this.#cursor, this.#source.revision());
      this.#live = true;
    } else {
      setImmediate(() => this.#catchUp());
    }
    this.#delivery.pushAll(events);
    // Caught up past writes elsewhere: say so now, not at the next write (which may be long in coming), so
    // that a cache started on a quiet store knows it is current (a consistent read from it waits for that).
    if (this.#cursor > delivered) this.#delivery.pushProgress(this.#cursor);
  }
}
