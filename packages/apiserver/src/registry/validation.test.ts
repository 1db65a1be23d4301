import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { isBase64 } from './validation.ts';

/** What isBase64 answered before it took canonical values the quick way: Go's padded StdEncoding. */
const STD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

describe('isBase64', () => {
  it('agrees with the expression on canonical, non-canonical and invalid values of every length', () => {
    const values: string[] = ['', 'QQ==', 'QR==', 'QUI=', 'QUJ=', 'QUJD', 'Q', 'QQ', 'QQ=', '===='];
    for (let n = 0; n < 200; n += 7) {
      const canonical = randomBytes(n).toString('base64');
      values.push(canonical);
      values.push(randomBytes(n).toString('base64url'));
      values.push(canonical.replace(/=+$/, ''));
      values.push(` ${canonical}`);
      values.push(`${canonical}\n`);
      values.push(`${canonical.slice(0, -1)}!`);
      values.push(`${canonical.slice(0, 4)}=${canonical.slice(5)}`);
      // Non-zero bits after the last character's data: not canonical, still accepted as Go accepts them.
      if (canonical.endsWith('==')) values.push(`${canonical.slice(0, -3)}B==`);
      if (canonical.endsWith('=') && !canonical.endsWith('==')) values.push(`${canonical.slice(0, -2)}B=`);
    }
    for (const value of values) assert.equal(isBase64(value), STD_BASE64.test(value), JSON.stringify(value));
  });
});
