// An independent X.509 parser that the pki tests read our certificates and CSRs back with. The
// signing paths build their DER themselves (x509-encode.ts), so production code must not import this module.
// @peculiar/x509 resolves its internals through tsyringe decorators, which need the Reflect polyfill loaded
// before the library module is evaluated; ES modules evaluate imports in order, so this import comes first.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

// Node's WebCrypto is structurally the DOM `Crypto` the library is typed against; only the nominal types differ.
x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export { x509 };
