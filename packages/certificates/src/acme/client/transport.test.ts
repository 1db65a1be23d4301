import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AcmeTransportError } from './problem.ts';
import { AcmeTransport } from './transport.ts';

describe('AcmeTransport', () => {
  it('refuses requests once closed, also when it never made one (its Agent is made with the first)', async () => {
    const transport = new AcmeTransport();
    await transport.close();
    await assert.rejects(transport.send('discover', 'GET', 'https://acme.invalid/directory'), (err) => {
      assert.ok(err instanceof AcmeTransportError);
      assert.match(String(err.message), /closed/);
      return true;
    });
  });
});
