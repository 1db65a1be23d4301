import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { controllerListenFlags, describeListenError, withListenErrorInWords } from './listen-error.ts';

/** An error shaped as Node's for a failed listen() (what net.Server emits), wrapped as the controller does. */
function listenFailure(code: string, address: string, port: number, wrap?: string): Error {
  const errno = Object.assign(new Error(`listen ${code}: ${address}:${port}`), {
    code,
    syscall: 'listen',
    address,
    port,
  });
  return wrap === undefined ? errno : new Error(`${wrap}: ${errno.message}`, { cause: errno });
}

const FLAGS = controllerListenFlags({
  metricsBindAddress: '127.0.0.1:9402',
  acmeHTTP01ListenAddress: ':80',
});

describe('listen errors in words', () => {
  it('names the flag whose port failed, found through the causes', () => {
    assert.equal(
      describeListenError(listenFailure('EADDRINUSE', '127.0.0.1', 9402), FLAGS),
      '--metrics-bind-address 127.0.0.1:9402: 127.0.0.1:9402 is already in use (EADDRINUSE), perhaps by ' +
        'another certkit controller; stop it or choose another --metrics-bind-address (0 turns /metrics off)',
    );
    assert.equal(
      describeListenError(listenFailure('EACCES', '::', 80, '--acme-http01-listen-address :80'), FLAGS),
      '--acme-http01-listen-address :80: not allowed to listen on [::]:80 (EACCES); ports below 1024 need privileges',
    );
    assert.equal(
      describeListenError(listenFailure('EADDRNOTAVAIL', '192.0.2.1', 9402), FLAGS),
      '--metrics-bind-address 127.0.0.1:9402: 192.0.2.1 is not an address of this machine (EADDRNOTAVAIL)',
    );
  });

  it('leaves other errors, and ports no flag chose, as they are', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), {
      code: 'ECONNREFUSED',
      syscall: 'connect',
    });
    assert.equal(describeListenError(refused, FLAGS), undefined);
    assert.equal(withListenErrorInWords(refused, FLAGS), refused);
    assert.equal(describeListenError(listenFailure('EADDRINUSE', '127.0.0.1', 1234), FLAGS), undefined);
    assert.equal(
      describeListenError(new Error('timed out waiting for cache to be synced'), FLAGS),
      undefined,
    );
  });

  it('has no flag for a listener that is off', () => {
    assert.deepEqual(
      controllerListenFlags({ metricsBindAddress: '0' }).map((f) => f.flag),
      [],
    );
    assert.deepEqual(
      controllerListenFlags({ metricsBindAddress: ':9402', acmeHTTP01ListenAddress: '[::]:8089' }).map(
        (f) => [f.flag, f.port],
      ),
      [
        ['metrics-bind-address', 9402],
        ['acme-http01-listen-address', 8089],
      ],
    );
  });
});
