import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { headerBlock, requestMessage } from './http1-request.ts';

/** Request bytes as node:http would write them for the same request. */

const fixed = headerBlock([
  ['Host', 'example.com:6443'],
  ['Authorization', 'Bearer t'],
]);

describe('requestMessage', () => {
  it('puts line, headers and body in one string, the length in bytes', () => {
    assert.equal(
      requestMessage(
        'POST',
        '/api/v1/x?dryRun=All',
        fixed,
        'application/json',
        '{"a":"ü"}',
        'application/json',
      ),
      'POST /api/v1/x?dryRun=All HTTP/1.1\r\nHost: example.com:6443\r\nAuthorization: Bearer t\r\n' +
        'Accept: application/json\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{"a":"ü"}',
    );
  });

  it('announces an empty body for PUT, POST and PATCH only', () => {
    const head = (method: string) => requestMessage(method, '/', headerBlock([]), '*/*', undefined, 'x');
    assert.equal(head('GET'), 'GET / HTTP/1.1\r\nAccept: */*\r\n\r\n');
    assert.equal(head('DELETE'), 'DELETE / HTTP/1.1\r\nAccept: */*\r\n\r\n');
    assert.equal(head('PUT'), 'PUT / HTTP/1.1\r\nAccept: */*\r\nContent-Length: 0\r\n\r\n');
  });

  it('sends Latin-1 header values as Latin-1 and the body as UTF-8', () => {
    const message = requestMessage('POST', '/', headerBlock([['X-Name', 'café']]), '*/*', '"é"', 'a');
    assert.ok(Buffer.isBuffer(message));
    const bytes = message as Buffer;
    assert.ok(bytes.includes(Buffer.from('X-Name: caf\xe9\r\n', 'latin1')));
    assert.ok(bytes.subarray(bytes.length - 4).equals(Buffer.from('"é"', 'utf8')));
    assert.match(bytes.toString('latin1'), /Content-Length: 4\r\n/);
  });

  it('refuses header values node:http refuses', () => {
    for (const value of ['a\r\nX-Injected: 1', 'a\nb', 'a\0b', 'ŝ']) {
      assert.throws(() => headerBlock([['Authorization', `Bearer ${value}`]]), {
        code: 'ERR_INVALID_CHAR',
        message: 'Invalid character in header content ["Authorization"]',
      });
    }
    assert.throws(() => requestMessage('GET', '/', fixed, 'a\r\nb', undefined, ''), {
      code: 'ERR_INVALID_CHAR',
    });
  });
});
