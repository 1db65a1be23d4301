/**
 * Regenerates nsupdate-tsig.json: BIND's own `nsupdate` signs an UPDATE with each key of a test BIND
 * (../bind/bind.ts), through a UDP relay that records the request and BIND's signed answer byte for byte.
 * Those bytes are the known vectors of tsig.test.ts. Run: `npx node packages/testenv/src/dns/capture-nsupdate.ts`.
 */

import { spawn } from 'node:child_process';
import { createSocket, type RemoteInfo } from 'node:dgram';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startBind } from '../bind/bind.ts';

const ALGORITHMS = ['HMACMD5', 'HMACSHA1', 'HMACSHA256', 'HMACSHA512'];

const bind = await startBind();
const relay = createSocket('udp4');
const upstream = createSocket('udp4');
let client: RemoteInfo | undefined;
let request: Buffer | undefined;
let response: Buffer | undefined;
relay.on('message', (message, from) => {
  client = from;
  request = message;
  upstream.send(message, bind.port, '127.0.0.1');
});
upstream.on('message', (message) => {
  response = message;
  relay.send(message, client!.port, client!.address);
});
await new Promise<void>((resolve) => relay.bind(0, '127.0.0.1', resolve));
const relayPort = relay.address().port;

const vectors = [];
try {
  for (const algorithm of ALGORITHMS) {
    const key = bind.keys[algorithm];
    request = response = undefined;
    const script = [
      `server 127.0.0.1 ${relayPort}`,
      'zone example.test.',
      `update add _acme-challenge.vector.example.test. 60 IN TXT "nsupdate-${algorithm}"`,
      'send',
      '',
    ].join('\n');
    await new Promise<void>((resolve, reject) => {
      const child = spawn('nsupdate', ['-y', `${key.bindAlgorithm}:${key.name}:${key.secret}`], {
        stdio: ['pipe', 'inherit', 'inherit'],
      });
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`nsupdate exited ${code}`))));
      child.stdin.end(script);
    });
    vectors.push({
      algorithm,
      keyName: key.name,
      secret: key.secret,
      request: request!.toString('hex'),
      response: response!.toString('hex'),
    });
  }
} finally {
  relay.close();
  upstream.close();
  await bind.stop();
}
await writeFile(join(import.meta.dirname, 'nsupdate-tsig.json'), `${JSON.stringify(vectors, null, 2)}\n`);
