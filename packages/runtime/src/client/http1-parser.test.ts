import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type HttpResponse, ResponseParser } from './http1-parser.ts';

/** Response framing, fed the way a socket may deliver it: whole, or cut at every possible byte. */

/** Feeds the bytes in pieces cut at `cuts`; returns the responses completed and whether more was pending. */
function feed(parser: ResponseParser, bytes: Buffer, cuts: number[] = []): HttpResponse[] {
  const responses: HttpResponse[] = [];
  let start = 0;
  for (const end of [...cuts, bytes.length]) {
    const response = parser.push(bytes.subarray(start, end));
    if (response) responses.push(response);
    start = end;
  }
  return responses;
}

/** Parses `raw` whole and cut in two at every offset, asserting the same single response each time. */
function parseEveryWay(raw: string): { response: HttpResponse; keepAlive: boolean } {
  const bytes = Buffer.from(raw, 'utf8');
  let first: { response: HttpResponse; keepAlive: boolean } | undefined;
  for (let cut = 0; cut < bytes.length; cut++) {
    const parser = new ResponseParser();
    const responses = feed(parser, bytes, cut === 0 ? [] : [cut]);
    assert.equal(responses.length, 1, `one response when cut at ${cut}`);
    const [response] = responses;
    if (!first) first = { response, keepAlive: parser.keepAlive };
    else {
      assert.deepEqual(
        [response.status, response.fields, response.body, parser.keepAlive],
        [first.response.status, first.response.fields, first.response.body, first.keepAlive],
        `cut at ${cut}`,
      );
    }
  }
  return first!;
}

describe('ResponseParser', () => {
  it('reads a Content-Length body, with multi-byte UTF-8 cut anywhere', () => {
    const body = '{"name":"grüße – ✓"}';
    const { response, keepAlive } = parseEveryWay(
      `HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        'Keep-Alive: timeout=5\r\nX-Empty:\r\n\r\n' +
        body,
    );
    assert.equal(response.status, 201);
    assert.equal(response.body, body);
    assert.equal(response.header('content-type'), 'application/json');
    assert.equal(response.header('keep-alive'), 'timeout=5');
    assert.equal(response.header('x-empty'), '');
    assert.equal(keepAlive, true);
  });

  it('decodes a chunked body with extensions and trailers', () => {
    const { response, keepAlive } = parseEveryWay(
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n' +
        '5\r\n{"a":\r\nA;ext=1\r\n"ü-12345"\r\n1\r\n}\r\n0\r\nX-Trailer: t\r\n\r\n',
    );
    assert.equal(response.body, '{"a":"ü-12345"}');
    assert.equal(keepAlive, true);
  });

  it('skips 1xx responses and reads none of a 204 or 304 body', () => {
    const { response } = parseEveryWay(
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n' +
        'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}',
    );
    assert.equal(response.status, 200);
    assert.equal(response.body, '{}');
    for (const status of [204, 304]) {
      const parser = new ResponseParser();
      const [r] = feed(parser, Buffer.from(`HTTP/1.1 ${status} X\r\nContent-Length: 7\r\n\r\n`));
      assert.equal(r.status, status);
      assert.equal(r.body, '');
    }
  });

  it('reads a body without length until the connection ends, and says not to reuse it', () => {
    const parser = new ResponseParser();
    assert.deepEqual(feed(parser, Buffer.from('HTTP/1.1 200 OK\r\n\r\n{"a":'), [20]), []);
    assert.deepEqual(feed(parser, Buffer.from('1}')), []);
    const response = parser.end();
    assert.equal(response?.body, '{"a":1}');
    assert.equal(parser.keepAlive, false);
    assert.equal(new ResponseParser().end(), undefined, 'nothing to complete');
  });

  it('keeps the connection only when the server allows it', () => {
    const keepAlive = (raw: string) => {
      const parser = new ResponseParser();
      assert.equal(feed(parser, Buffer.from(raw)).length, 1);
      return parser.keepAlive;
    };
    assert.equal(keepAlive('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'), true);
    assert.equal(keepAlive('HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n'), false);
    assert.equal(keepAlive('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n'), false);
    assert.equal(keepAlive('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n'), true);
    assert.equal(
      keepAlive('HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'),
      false,
      'a length next to a transfer coding',
    );
    assert.equal(keepAlive('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n{}'), false, 'bytes after the body');
  });

  it("reads the server's idle timeout from Keep-Alive", () => {
    const idle = (fields: string) => {
      const parser = new ResponseParser();
      feed(parser, Buffer.from(`HTTP/1.1 200 OK\r\n${fields}Content-Length: 0\r\n\r\n`));
      return parser.idleTimeoutMs;
    };
    assert.equal(idle('Keep-Alive: timeout=65\r\n'), 65_000);
    assert.equal(idle('keep-alive: max=100, Timeout=5\r\n'), 5000);
    assert.equal(idle('Keep-Alive: max=100\r\n'), undefined);
    assert.equal(idle(''), undefined);
  });

  it('reads header values as node:http reports them', () => {
    const [response] = feed(
      new ResponseParser(),
      Buffer.from(
        'HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After:  3 \r\n' +
          'X-List: a\r\ncontent-type: text/plain\r\nRETRY-AFTER: 9\r\nX-List:\tb\r\nContent-Length: 0\r\n\r\n',
      ),
    );
    assert.equal(response.header('content-type'), 'application/json', 'the first of a repeated Content-Type');
    assert.equal(response.header('retry-after'), '3');
    assert.equal(response.header('x-list'), 'a, b');
    assert.equal(response.header('x-missing'), undefined);
  });

  it('reads one response after another', () => {
    const parser = new ResponseParser();
    const one = 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n"a"';
    const two = 'HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n"b"\r\n0\r\n\r\n';
    assert.equal(feed(parser, Buffer.from(one))[0].body, '"a"');
    assert.equal(parser.started, false);
    const [second] = feed(parser, Buffer.from(two), [10]);
    assert.deepEqual([second.status, second.body], [404, '"b"']);
  });

  it('tells whether a response had begun and what its status was when cut short', () => {
    const parser = new ResponseParser();
    assert.equal(parser.started, false);
    feed(parser, Buffer.from('HTTP/1.1 200 OK\r\nContent-Le'));
    assert.deepEqual([parser.started, parser.status], [true, 0]);
    feed(parser, Buffer.from('ngth: 10\r\n\r\n{"a"'));
    assert.equal(parser.status, 200);
  });

  it('refuses malformed responses', () => {
    const bad = [
      'HTTP/2 200 OK\r\n\r\n',
      'HTTP/1.1 20 OK\r\n\r\n',
      'HTTP/1.1 200 OK\r\nNo colon\r\n\r\n',
      'HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n',
      'HTTP/1.1 200 OK\r\n Folded: x\r\n\r\n',
      'HTTP/1.1 200 OK\r\nX: a\x00b\r\n\r\n',
      'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n{',
      'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n',
      'HTTP/1.1 101 Switching Protocols\r\n\r\n',
      `HTTP/1.1 200 OK\r\nX: ${'a'.repeat(20_000)}\r\n\r\n`,
      `HTTP/1.1 200 OK\r\nX: ${'a'.repeat(20_000)}`,
    ];
    for (const raw of bad) {
      assert.throws(() => new ResponseParser().push(Buffer.from(raw)), { code: 'HPE_INVALID_RESPONSE' }, raw);
    }
  });
});
