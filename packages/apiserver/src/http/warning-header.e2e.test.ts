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

  it("bounds the warnings as kube-apiserver's recorder: about 4 Ki characters, each text once", async () => {
    const fields: Record<string, unknown> = {};
    for (let i = 0; i < 30_000; i++) fields[`unknown${i}`] = i;
    const res = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { name: 'many-unknown' }, ...fields },
    });
    assert.equal(res.status, 201, res.text.slice(0, 300));
    const warnings = String(res.headers.warning).split(/, (?=299 - ")/);
    // Each ~25 characters: the first ~4096 of them, then the one that went past the total.
    assert.ok(warnings.length > 100 && warnings.length < 200, `${warnings.length} warnings`);
    assert.equal(warnings[0], '299 - "unknown field \\"unknown0\\""');
    const text = warnings.map((w) => JSON.parse(w.slice('299 - '.length)) as string).join('');
    assert.ok(text.length <= 4096 + 256, `${text.length} characters`);
  });

  it('past the total, cuts each warning to 256 characters, those already written too', async () => {
    const long = 'x'.repeat(1000);
    const fields: Record<string, unknown> = {};
    for (let i = 0; i < 10; i++) fields[`${long}${i}`] = i;
    const res = await t.fetch('POST', '/api/v1/namespaces/default/configmaps', {
      body: { metadata: { name: 'long-unknown' }, ...fields },
    });
    assert.equal(res.status, 201, res.text.slice(0, 300));
    const warnings = String(res.headers.warning)
      .split(/, (?=299 - ")/)
      .map((w) => JSON.parse(w.slice('299 - '.length)) as string);
    // The fifth would pass 4096: from then on each is cut to 256, the first four too; ten fit again.
    assert.equal(warnings.length, 10);
    for (const w of warnings) assert.equal(w, `unknown field "${long}`.slice(0, 256));
  });

  it('refuses the same fields under fieldValidation=Strict with the same quoting', async () => {
    const res = await t.fetch('POST', '/api/v1/namespaces/default/configmaps?fieldValidation=Strict', {
      body: { metadata: { name: 'utf8-strict' }, 'se\ufeffcret': 1 },
    });
    assert.equal(res.status, 400);
    assert.match(res.json.message, /strict decoding error: unknown field "se\\ufeffcret"$/);
  });
});
