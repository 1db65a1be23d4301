import { StringDecoder } from 'node:string_decoder';
import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from '@certkit/apimachinery/json-bytes';

/**
 * Decodes a JSON list response (`{"kind": …, "metadata": {…}, "items": [ … ]}`) as it streams in: each element
 * of the top-level `items` array is cut out and JSON.parsed on its own, and handed over before the next
 * byte is looked at, so a list of 50 000 Secrets never exists as one string or one object graph. The other
 * top-level fields (metadata, kind, apiVersion) are small and parsed whole, wherever they come in the object.
 *
 * The scanner only tracks what it must to find element boundaries: nesting depth, whether it is inside a
 * string, and whether the previous character was a backslash. Everything else (the validity of each element)
 * is left to JSON.parse. State survives chunk boundaries, so chunks may split anything, even a UTF-8 sequence.
 */

type TopState = 'start' | 'key' | 'colon' | 'value' | 'afterValue' | 'done';

/** Which piece of text is being collected: a top-level key, a top-level value, or an element of items. */
type Capture = 'none' | 'key' | 'value' | 'item';

const STRING_SPECIAL = /["\\]/g;

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * Splits a JSON list response into its items as the bytes arrive, so a large list is decoded item by item
 * rather than held whole.
 */
export class ListScanner {
  readonly #onItem: (item: unknown) => void;
  readonly #decoder = new StringDecoder('utf8');
  /** Top-level fields other than items, parsed. */
  readonly fields: Record<string, unknown> = {};
  #itemCount = 0;

  #depth = 0;
  #inString = false;
  #escaped = false;
  #top: TopState = 'start';
  #key = '';
  /** Inside the top-level items array (depth 2 holds its elements). */
  #inItems = false;
  #expectItem = false;

  #capture: Capture = 'none';
  /** The depth the captured value sits at: it ends when a close bracket brings depth back here. */
  #captureDepth = 0;
  /** A captured scalar (number, true, false, null) ends at the next delimiter rather than a bracket. */
  #captureScalar = false;
  /** Text of the capture from earlier chunks; the current chunk's part is sliced from #captureStart. */
  #captured: string[] = [];
  #captureStart = 0;

  constructor(onItem: (item: unknown) => void) {
    this.#onItem = onItem;
  }

  get itemCount(): number {
    return this.#itemCount;
  }

  /** True once the closing brace of the top-level object was seen. */
  get complete(): boolean {
    return this.#top === 'done';
  }

  /** Feeds the next bytes of the response. */
  write(chunk: Buffer | string): void {
    const text = typeof chunk === 'string' ? chunk : this.#decoder.write(chunk);
    if (text.length > 0) this.#scan(text);
  }

  /** Call at the end of the body; throws if the JSON object did not end. */
  end(): void {
    const rest = this.#decoder.end();
    if (rest.length > 0) this.#scan(rest);
    if (this.#top !== 'done') throw new SyntaxError('list response ended before its closing brace');
  }

  #scan(text: string): void {
    this.#captureStart = 0;
    const length = text.length;
    for (let i = 0; i < length; i++) {
      const c = text.charCodeAt(i);
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (c === BACKSLASH) this.#escaped = true;
        else if (c !== QUOTE) {
          // Long strings (base64 Secret data) dominate list bodies: jump to the next quote or backslash.
          STRING_SPECIAL.lastIndex = i + 1;
          const next = STRING_SPECIAL.exec(text);
          i = (next ? next.index : length) - 1;
        } else if (c === QUOTE) {
          this.#inString = false;
          // A string that is itself the captured key or value ends here.
          if (this.#capture !== 'none' && !this.#captureScalar && this.#depth === this.#captureDepth) {
            this.#finishCapture(text, i + 1);
          }
        }
        continue;
      }
      if (
        this.#captureScalar &&
        (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || isWhitespace(c))
      ) {
        this.#finishCapture(text, i);
      }
      if (isWhitespace(c)) continue;

      if (this.#top === 'start') {
        if (c !== OPEN_BRACE) throw new SyntaxError(`list response is not a JSON object`);
        this.#depth = 1;
        this.#top = 'key';
        continue;
      }
      if (this.#top === 'done') throw new SyntaxError('unexpected data after the list object');

      // The start of a value we collect: a top-level field's, or an element of items.
      if (this.#capture === 'none') {
        if (this.#depth === 1 && this.#top === 'value') {
          if (this.#key === 'items' && c === OPEN_BRACKET) {
            this.#depth = 2;
            this.#inItems = true;
            this.#expectItem = true;
            this.#top = 'afterValue';
            continue;
          }
          this.#beginCapture('value', c, i);
        } else if (this.#depth === 2 && this.#inItems && this.#expectItem && c !== CLOSE_BRACKET) {
          this.#expectItem = false;
          this.#beginCapture('item', c, i);
        } else if (this.#depth === 1 && this.#top === 'key') {
          if (c === CLOSE_BRACE) {
            this.#depth = 0;
            this.#top = 'done';
            continue;
          }
          if (c !== QUOTE) throw new SyntaxError(`expected a key in the list object`);
          this.#beginCapture('key', c, i);
        }
        if (this.#captureScalar) continue;
      }

      switch (c) {
        case QUOTE:
          this.#inString = true;
          break;
        case OPEN_BRACE:
        case OPEN_BRACKET:
          this.#depth++;
          break;
        case CLOSE_BRACE:
        case CLOSE_BRACKET:
          this.#depth--;
          if (this.#capture !== 'none' && this.#depth === this.#captureDepth) {
            this.#finishCapture(text, i + 1);
          } else if (this.#inItems && this.#depth === 1) {
            this.#inItems = false; // the end of items
          } else if (this.#depth === 0) {
            this.#top = 'done';
          }
          break;
        case COMMA:
          if (this.#depth === 1) this.#top = 'key';
          else if (this.#depth === 2 && this.#inItems) this.#expectItem = true;
          break;
        case COLON:
          if (this.#depth === 1 && this.#top === 'colon') this.#top = 'value';
          break;
      }
    }
    if (this.#capture !== 'none') {
      this.#captured.push(text.slice(this.#captureStart));
    }
  }

  #beginCapture(kind: Capture, c: number, i: number): void {
    this.#capture = kind;
    this.#captureDepth = this.#depth;
    this.#captureScalar = c !== QUOTE && c !== OPEN_BRACE && c !== OPEN_BRACKET;
    this.#captured = [];
    this.#captureStart = i;
  }

  #finishCapture(text: string, end: number): void {
    this.#captured.push(text.slice(this.#captureStart, end));
    const raw = this.#captured.length === 1 ? this.#captured[0] : this.#captured.join('');
    const kind = this.#capture;
    this.#capture = 'none';
    this.#captureScalar = false;
    this.#captured = [];
    const value: unknown = JSON.parse(raw);
    if (kind === 'key') {
      this.#key = value as string;
      this.#top = 'colon';
    } else if (kind === 'value') {
      this.fields[this.#key] = value;
      this.#top = 'afterValue';
    } else {
      this.#itemCount++;
      this.#onItem(value);
    }
  }
}
