/**
 * HTTP/1.1 requests as bytes for the unary pool: the request line, headers and body in one string, which the
 * socket writes at once (a string rather than a Buffer, so the body is encoded to UTF-8 only there). The
 * headers are the ones node:http would send for the same request, and values it would refuse are refused the
 * same way.
 */

/** Header lines (each ending in CRLF) made once and sent with many requests. */
export interface HeaderBlock {
  text: string;
  /** Whether every value is ASCII; Latin-1 values need the head encoded apart from the body. */
  ascii: boolean;
}

/** Header values as node:http accepts them (its checkInvalidHeaderChar), and the usual all-ASCII ones. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const ASCII_HEADER_VALUE = /^[\t\x20-\x7e]*$/;

export function headerBlock(headers: [name: string, value: string][]): HeaderBlock {
  let text = '';
  let ascii = true;
  for (const [name, value] of headers) {
    ascii = checkValue(name, value) && ascii;
    text += `${name}: ${value}\r\n`;
  }
  return { text, ascii };
}

/**
 * The whole request. `path` must be encoded already (it is what follows the method on the request line);
 * without a body, POST, PUT and PATCH say Content-Length: 0, as node:http does.
 */
export function requestMessage(
  method: string,
  path: string,
  fixed: HeaderBlock,
  accept: string,
  body: string | undefined,
  contentType: string,
): string | Buffer {
  let ascii = checkValue('Accept', accept) && fixed.ascii;
  let head = `${method} ${path} HTTP/1.1\r\n${fixed.text}Accept: ${accept}\r\n`;
  if (body !== undefined) {
    ascii = checkValue('Content-Type', contentType) && ascii;
    head += `Content-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body, 'utf8')}\r\n\r\n`;
  } else {
    head += method === 'GET' || method === 'DELETE' ? '\r\n' : 'Content-Length: 0\r\n\r\n';
  }
  if (!ascii) return Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(body ?? '', 'utf8')]);
  return body === undefined ? head : head + body;
}

/** Throws for a value node:http would refuse, as it would; returns whether the value is all ASCII. */
function checkValue(name: string, value: string): boolean {
  if (ASCII_HEADER_VALUE.test(value)) return true;
  if (!HEADER_VALUE.test(value)) {
    throw Object.assign(new TypeError(`Invalid character in header content ["${name}"]`), {
      code: 'ERR_INVALID_CHAR',
    });
  }
  return false;
}
