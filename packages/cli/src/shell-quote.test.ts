import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { shellQuote } from './shell-quote.ts';

describe('shellQuote', () => {
  it('leaves plain paths alone and single-quotes the rest, a single quote included', () => {
    assert.equal(shellQuote('.certkit/kubeconfig'), '.certkit/kubeconfig');
    assert.equal(shellQuote('/tmp/a-b_c/x.yaml'), '/tmp/a-b_c/x.yaml');
    assert.equal(
      shellQuote('/home/me/My Projects/.certkit/kubeconfig'),
      "'/home/me/My Projects/.certkit/kubeconfig'",
    );
    assert.equal(shellQuote("/tmp/it's"), "'/tmp/it'\\''s'");
    assert.equal(shellQuote('$HOME/*'), "'$HOME/*'");
    assert.equal(shellQuote(''), "''");
  });
});
