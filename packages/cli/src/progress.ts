/**
 * One status line for a long operation (`renew --all` over thousands of Certificates, `check api --wait`),
 * redrawn in place on a terminal and absent in a pipe or a file, where a log reader wants the results and
 * not a hundred carriage returns. Lines the command prints meanwhile go above it (`print`), as apt and
 * docker pull keep their progress at the bottom of what they print.
 */

/** The part of a stream the line needs: `process.stderr` and `process.stdout` are ones. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** Erase from the cursor to the end of the line (ECMA-48 EL), after a carriage return to its start. */
const CLEAR_LINE = '\r\x1b[K';

/** Redraws at most this often: a terminal drawing 10 000 updates a second slows the work it reports on. */
const MIN_REDRAW_MS = 100;

export class Progress {
  readonly #stream: ProgressStream;
  readonly #now: () => number;
  /** Whether anything is drawn at all: only on a terminal. */
  readonly enabled: boolean;
  #text = '';
  #shown = false;
  #drawnAt = -Infinity;

  constructor(stream: ProgressStream, { now = Date.now }: { now?: () => number } = {}) {
    this.#stream = stream;
    this.#now = now;
    this.enabled = stream.isTTY === true;
  }

  /** Sets the line's text; drawn now unless it was drawn less than 100 ms ago (`force` draws anyway). */
  update(text: string, { force = false }: { force?: boolean } = {}): void {
    this.#text = text;
    if (!this.enabled) return;
    const now = this.#now();
    if (!force && now - this.#drawnAt < MIN_REDRAW_MS) return;
    this.#drawnAt = now;
    this.#draw();
  }

  /**
   * Writes a finished line to `out` above the status line. When `out` is another stream than the line's
   * (stdout beside stderr) but a terminal too, it is most likely the same one, so the line is erased first and
   * redrawn after.
   */
  print(out: ProgressStream, text: string): void {
    // Into a file or a pipe (`renew --all > log`), the terminal's line is not in the way.
    const sameScreen = this.#shown && (out === this.#stream || out.isTTY === true);
    if (sameScreen) this.#stream.write(CLEAR_LINE);
    out.write(text);
    if (sameScreen) this.#draw();
  }

  /** Erases the line for good: what the command prints last stands alone. */
  done(): void {
    if (this.#shown) this.#stream.write(CLEAR_LINE);
    this.#shown = false;
  }

  #draw(): void {
    // A line wider than the terminal wraps, and `\r` then returns to the start of its last row only.
    // A terminal of unknown size (0 columns, as under `script` without one) is taken as 80 wide.
    const width = (this.#stream.columns || 80) - 1;
    const text = this.#text.length > width ? `${this.#text.slice(0, Math.max(0, width - 1))}…` : this.#text;
    this.#stream.write(`${CLEAR_LINE}${text}`);
    this.#shown = true;
  }
}

/** `n/total (p%)`, what the line says of a count of work done. */
export function countProgress(verb: string, done: number, total: number, noun: string): string {
  const percent = total === 0 ? 100 : Math.floor((done / total) * 100);
  return `${verb} ${done}/${total} ${noun} (${percent}%)`;
}
