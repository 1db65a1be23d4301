import { nodeHttp } from './node-http.ts';

const { maxHeaderSize } = nodeHttp;

/**
 * Reads HTTP/1.1 responses from the bytes of one connection, one response at a time, the body decoded as
 * UTF-8 text: the part of HTTP the unary client needs (RFC 9112 message framing), without node:http's
 * streams. Framing follows RFC 9112 §6.3: no body for 1xx/204/304; chunked when Transfer-Encoding ends in
 * chunked; else Content-Length; else until the server closes. Malformed input throws; the connection is
 * then unusable, as with llhttp. Answers to HEAD would be misread (they announce a body they do not carry):
 * the transport never sends HEAD.
 */

/** A complete response. */
export class HttpResponse {
  readonly status: number;
  /** The header lines as received, CRLF between them; read through header(). */
  readonly fields: string;
  readonly body: string;
  /** performance.now() when the head had arrived (what the metrics hook times). */
  readonly headersAt: number;

  constructor(status: number, fields: string, body: string, headersAt: number) {
    this.status = status;
    this.fields = fields;
    this.body = body;
    this.headersAt = headersAt;
  }

  /** A header's value; `name` in lower case. */
  header(name: string): string | undefined {
    return fieldValue(this.fields, name);
  }
}

// Parser states.
const HEAD = 0;
const LENGTH = 1;
const CHUNK_SIZE = 2;
const CHUNK_DATA = 3;
const CHUNK_END = 4;
const TRAILERS = 5;
const UNTIL_CLOSE = 6;

const CRLF = Buffer.from('\r\n');
const END_OF_HEAD = Buffer.from('\r\n\r\n');
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: [^\r\n]*)?$/;
/**
 * Header lines as llhttp accepts them: a token, a colon, then tab, visible ASCII or obs-text. Checked once
 * for the whole head, so that reading a field later needs no checks.
 */
const FIELD_LINES =
  /^(?:[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[\t\x20-\x7e\x80-\xff]*)(?:\r\n[!#$%&'*+\-.^_`|~0-9A-Za-z]+:[\t\x20-\x7e\x80-\xff]*)*$/;
const CHUNK_SIZE_LINE = /^([0-9A-Fa-f]{1,12})[\t ]*(?:;[^\r\n]*)?$/;
/** Fields of which node:http keeps the first value when repeated; it joins the others with ', '. */
const FIRST_VALUE_WINS = new Set(['content-type', 'retry-after']);

export class ResponseParser {
  #state = HEAD;
  /** Bytes of an incomplete head or line, kept until the rest arrives. */
  #partial: Buffer | undefined;
  #status = 0;
  #fields = '';
  #headersAt = 0;
  #keepAlive = false;
  #idleTimeoutMs: number | undefined;
  #body: Buffer[] = [];
  #remaining = 0;
  #trailerBytes = 0;
  #started = false;

  /** Whether any byte of the current response arrived. */
  get started(): boolean {
    return this.#started;
  }

  /** The status of the current response once its head arrived, else 0. */
  get status(): number {
    return this.#state === HEAD ? 0 : this.#status;
  }

  /**
   * Whether the connection may carry another request after the response just completed: the server did not
   * ask to close it, the body did not run until the close, and no bytes came after the response.
   */
  get keepAlive(): boolean {
    return this.#keepAlive;
  }

  /** How long the server keeps the connection open while idle, if the response said (Keep-Alive: timeout=N). */
  get idleTimeoutMs(): number | undefined {
    return this.#idleTimeoutMs;
  }

  /** Takes the next bytes; returns the response once it is complete. */
  push(chunk: Buffer): HttpResponse | undefined {
    this.#started = true;
    if (this.#partial) {
      chunk = Buffer.concat([this.#partial, chunk]);
      this.#partial = undefined;
    }
    let pos = 0;
    while (pos < chunk.length) {
      switch (this.#state) {
        case HEAD: {
          const end = chunk.indexOf(END_OF_HEAD, pos);
          if (end < 0 || end - pos > maxHeaderSize) {
            if (end >= 0 || chunk.length - pos > maxHeaderSize) throw parseError('response header too large');
            this.#partial = chunk.subarray(pos);
            return undefined;
          }
          this.#head(chunk.toString('latin1', pos, end));
          pos = end + 4;
          if (this.#state === HEAD && this.#status >= 200) return this.#complete(chunk, pos);
          break;
        }
        case LENGTH:
        case CHUNK_DATA: {
          const n = Math.min(this.#remaining, chunk.length - pos);
          this.#body.push(chunk.subarray(pos, pos + n));
          pos += n;
          this.#remaining -= n;
          if (this.#remaining > 0) break;
          if (this.#state === LENGTH) return this.#complete(chunk, pos);
          this.#state = CHUNK_END;
          break;
        }
        case CHUNK_SIZE:
        case CHUNK_END:
        case TRAILERS: {
          const eol = chunk.indexOf(CRLF, pos);
          if (eol < 0) {
            if (chunk.length - pos > maxHeaderSize) throw parseError('chunk line too long');
            this.#partial = chunk.subarray(pos);
            return undefined;
          }
          const line = chunk.toString('latin1', pos, eol);
          pos = eol + 2;
          if (this.#line(line)) return this.#complete(chunk, pos);
          break;
        }
        case UNTIL_CLOSE:
          this.#body.push(pos === 0 ? chunk : chunk.subarray(pos));
          return undefined;
      }
    }
    return undefined;
  }

  /** The connection ended: returns the response if the end completes it (a body delimited by the close). */
  end(): HttpResponse | undefined {
    if (this.#state !== UNTIL_CLOSE) return undefined;
    return this.#complete(undefined, 0);
  }

  /** One line of the chunked body; true when the body is complete. */
  #line(line: string): boolean {
    if (this.#state === CHUNK_SIZE) {
      const match = CHUNK_SIZE_LINE.exec(line);
      if (!match) throw parseError('invalid chunk size');
      this.#remaining = Number.parseInt(match[1], 16);
      this.#state = this.#remaining === 0 ? TRAILERS : CHUNK_DATA;
      this.#trailerBytes = 0;
      return false;
    }
    if (this.#state === CHUNK_END) {
      if (line !== '') throw parseError('missing CRLF after chunk data');
      this.#state = CHUNK_SIZE;
      return false;
    }
    // Trailer fields are not used; they end with an empty line.
    this.#trailerBytes += line.length + 2;
    if (this.#trailerBytes > maxHeaderSize) throw parseError('response trailers too large');
    return line === '';
  }

  /** Parses a head (without its final CRLFCRLF) and chooses how the body is delimited. */
  #head(head: string): void {
    let eol = head.indexOf('\r\n');
    if (eol < 0) eol = head.length;
    const statusLine = STATUS_LINE.exec(head.slice(0, eol));
    if (!statusLine) throw parseError(`invalid status line: ${JSON.stringify(head.slice(0, 80))}`);
    const fields = eol === head.length ? '' : head.slice(eol + 2);
    if (fields !== '' && !FIELD_LINES.test(fields)) throw parseError('invalid header line');
    const status = Number(statusLine[2]);
    this.#status = status;
    if (status < 200) {
      // 100 Continue, 103 Early Hints: the final response follows on the same connection.
      if (status === 101) throw parseError('unexpected 101 Switching Protocols');
      return;
    }
    this.#fields = fields;
    this.#headersAt = performance.now();
    // The fields that frame the message and say whether the connection may be kept, in one pass; repeated ones are joined with ', ' (so a repeated
    // Content-Length reads "5, 5" and is refused, as llhttp refuses it).
    let connection: string | undefined;
    let contentLength: string | undefined;
    let transferEncoding: string | undefined;
    let keepAlive: string | undefined;
    for (let pos = 0; pos < fields.length;) {
      let next = fields.indexOf('\r\n', pos);
      if (next < 0) next = fields.length;
      const colon = fields.indexOf(':', pos);
      const length = colon - pos;
      // The lengths of the names read here: others are not even sliced.
      if (length === 10 || length === 14 || length === 17) {
        const name = fields.slice(pos, colon).toLowerCase();
        const value = trimWhitespace(fields.slice(colon + 1, next));
        if (name === 'connection') connection = join(connection, value);
        else if (name === 'keep-alive') keepAlive = join(keepAlive, value);
        else if (name === 'content-length') contentLength = join(contentLength, value);
        else if (name === 'transfer-encoding') transferEncoding = join(transferEncoding, value);
      }
      pos = next + 2;
    }
    connection = connection?.toLowerCase();
    const idleTimeout = keepAlive && /(?:^|[,\s])timeout=(\d+)/i.exec(keepAlive)?.[1];
    this.#idleTimeoutMs = idleTimeout ? Number(idleTimeout) * 1000 : undefined;
    this.#keepAlive =
      statusLine[1] === '0' ? hasToken(connection, 'keep-alive') : !hasToken(connection, 'close');
    this.#body = [];
    if (status === 204 || status === 304) {
      this.#state = HEAD;
    } else if (transferEncoding !== undefined) {
      if (/(?:^|,)[\t ]*chunked[\t ]*$/i.test(transferEncoding)) this.#state = CHUNK_SIZE;
      else this.#state = UNTIL_CLOSE;
      // A length next to a transfer coding is ignored, and the connection not reused (RFC 9112 §6.3).
      if (contentLength !== undefined || this.#state === UNTIL_CLOSE) this.#keepAlive = false;
    } else if (contentLength !== undefined) {
      if (!/^\d{1,15}$/.test(contentLength)) throw parseError('invalid Content-Length');
      this.#remaining = Number(contentLength);
      this.#state = this.#remaining === 0 ? HEAD : LENGTH;
    } else {
      this.#state = UNTIL_CLOSE;
      this.#keepAlive = false;
    }
  }

  #complete(chunk: Buffer | undefined, pos: number): HttpResponse {
    // We never pipeline, so bytes after the response mean the server and we disagree on its length.
    if (chunk && pos < chunk.length) this.#keepAlive = false;
    const body = this.#body;
    const text =
      body.length === 0 ? '' : (body.length === 1 ? body[0] : Buffer.concat(body)).toString('utf8');
    const response = new HttpResponse(this.#status, this.#fields, text, this.#headersAt);
    this.#state = HEAD;
    this.#body = [];
    this.#started = false;
    return response;
  }
}

/**
 * The value of the field `name` (lower case) in header lines FIELD_LINES accepted, without surrounding
 * whitespace. Names are compared by length first, so most lines cost only finding their ends.
 */
function fieldValue(fields: string, name: string): string | undefined {
  let value: string | undefined;
  let pos = 0;
  while (pos < fields.length) {
    let next = fields.indexOf('\r\n', pos);
    if (next < 0) next = fields.length;
    const colon = fields.indexOf(':', pos);
    if (colon - pos === name.length && fields.slice(pos, colon).toLowerCase() === name) {
      if (value !== undefined && FIRST_VALUE_WINS.has(name)) return value;
      value = join(value, trimWhitespace(fields.slice(colon + 1, next)));
    }
    pos = next + 2;
  }
  return value;
}

function join(previous: string | undefined, value: string): string {
  return previous === undefined ? value : `${previous}, ${value}`;
}

function trimWhitespace(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isWhitespace(value.charCodeAt(start))) start++;
  while (end > start && isWhitespace(value.charCodeAt(end - 1))) end--;
  return start === 0 && end === value.length ? value : value.slice(start, end);
}

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

function hasToken(list: string | undefined, token: string): boolean {
  return list !== undefined && list.split(',').some((t) => t.trim() === token);
}

function parseError(message: string): Error {
  return Object.assign(new Error(`malformed HTTP response: ${message}`), { code: 'HPE_INVALID_RESPONSE' });
}
