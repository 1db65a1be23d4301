import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '@certkit/testenv/apiserver/test-server';
import { warningHeaderValue } from './warning-header.ts';

/** Warning headers as kube-apiserver writes them, whatever characters the warned-about field names hold. */

describe('warningHeaderValue', () => {
  it('quotes the text, escaping quotes and backslashes', () => {
    assert.equal(warningHeaderValue('unknown field "a\\b"'), '299 - "unknown field \\"a\\\\b\\""');
  });

  it('writes characters beyond latin1 as their UTF-8 bytes, which Node sends unchanged', () => {
    const value = warningHeaderValue('unknown field "spec.é€"')!;
    assert.equal(Buffer.from(value, 'latin1').toString('utf8'), '299 - "unknown field \\"spec.é€\\""');
  });

  it('drops text with a control character, as kube-apiserver does', () => {
    assert.equal(warningHeaderValue('a\nb'), undefined);
    assert.equal(warningHeaderValue('a\u0085b'), undefined);
  });
});

describe('Warning headers on a real server', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.close();
  });

  it('warns of unknown fields whose names are not latin1 (was a 500: Node refused the header)', async () => {
    const res = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { name: 'utf8-fields' }, data: {}, 'se\ufeffcret': 1, 'dätä€': 2, 'a\u0001b': 3 },
    });
    assert.equal(res.status, 201, res.text);
    // Node's client reads header bytes as latin1; the server sent UTF-8. Format and control characters are
    // escaped as Go's %q escapes them, printable ones are kept.
    const warning = Buffer.from(String(res.headers.warning), 'latin1').toString('utf8');
    assert.equal(
      warning,
      '299 - "unknown field \\"se\\\\ufeffcret\\"", 299 - "unknown field \\"dätä€\\"", 299 - "unknown field \\"a\\\\x01b\\""',
    );
  });

  it('refuses the same fields under fieldValidation=Strict with the same quoting', async () => {
    const res = await t.fetch('POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', {
      body: { metadata: { name: 'utf8-strict' }, 'se\ufeffcret': 1 },
    });
    assert.equal(res.status, 400);
    assert.match(res.json.message, /strict decoding error: unknown field "se\\ufeffcret"$/);
  });
});
