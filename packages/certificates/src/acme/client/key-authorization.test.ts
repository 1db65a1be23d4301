import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dns01RecordName, dns01TxtValue, http01Path, keyAuthorization } from './key-authorization.ts';

// RFC 8555 §8.3's token with RFC 7638 §3.1's thumbprint; the DNS value was computed apart with
// `printf %s "$KEYAUTH" | openssl dgst -sha256 -binary | base64 | tr '+/' '-_' | tr -d =`.
const token = 'evaGxfADs6pSRb2LAv9IZf17Dt3juxGJ-PCt92wr-oA';
const thumbprint = 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs';

describe('challenge values', () => {
  it('joins token and thumbprint into the key authorization, which is also the HTTP-01 body', () => {
    assert.equal(keyAuthorization(token, thumbprint), `${token}.${thumbprint}`);
    assert.equal(http01Path(token), `/.well-known/acme-challenge/${token}`);
  });

  it('hashes the key authorization into the DNS-01 TXT value (unpadded base64url SHA-256)', () => {
    assert.equal(
      dns01TxtValue(keyAuthorization(token, thumbprint)),
      'ZTRx1Ckl1-tM05o5zaizTTA0yUy5AGereMgSNWC6Ll8',
    );
  });

  it('names the DNS-01 record without the wildcard label, fully qualified', () => {
    assert.equal(dns01RecordName('www.example.org'), '_acme-challenge.www.example.org.');
    assert.equal(dns01RecordName('*.example.org'), '_acme-challenge.example.org.');
    assert.equal(dns01RecordName('example.org.'), '_acme-challenge.example.org.');
  });
});
