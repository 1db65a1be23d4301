import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DNS01ConfigError,
  DNS01ProviderRegistry,
  type DNS01ChangeRequest,
  type DNS01Provider,
  readSecretKey,
  type SecretReader,
  secretReaderFrom,
} from './provider.ts';
import { rfc2136Settings } from './rfc2136.ts';
import { defaultDNS01Providers } from './solver.ts';
import { TSIG_ALGORITHMS } from './tsig.ts';

/** Secrets as the controller's cache would hand them over, keyed by namespace/name. */
function secretsOf(secrets: Record<string, Record<string, string>>): SecretReader {
  return (namespace, name) => {
    const data = secrets[`${namespace}/${name}`];
    if (!data) return Promise.resolve(undefined);
    return Promise.resolve(Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v)])));
  };
}

/** A provider that records what it was asked to do, to show the registry's contract. */
function recordingProvider(name: string, calls: string[]): DNS01Provider {
  return {
    name,
    present: (request) => {
      calls.push(`present ${request.fqdn} ${request.value}`);
      return Promise.resolve();
    },
    cleanUp: (request) => {
      calls.push(`cleanUp ${request.fqdn} ${request.value}`);
      return Promise.resolve();
    },
  };
}

describe('DNS-01 providers', () => {
  it('picks the provider by the key of its block, and passes that block on', async () => {
    const calls: string[] = [];
    const registry = new DNS01ProviderRegistry([recordingProvider('cloudflare', calls)]);
    const block = { email: 'a@example.test', apiTokenSecretRef: { name: 'cf', key: 'token' } };
    const { provider, config } = registry.select({ cnameStrategy: 'None', cloudflare: block });
    assert.equal(provider.name, 'cloudflare');
    assert.equal(config, block);
    await provider.present({ fqdn: '_acme-challenge.a.test.', value: 'v' } as DNS01ChangeRequest);
    assert.deepEqual(calls, ['present _acme-challenge.a.test. v']);
  });

  it('refuses no provider, two providers, and names a provider certkit does not have', () => {
    const registry = defaultDNS01Providers();
    assert.deepEqual(registry.names(), ['rfc2136']);
    assert.throws(() => registry.select({ cnameStrategy: 'Follow' }), /no DNS01 provider configured/);
    assert.throws(
      () => registry.select({ rfc2136: { nameserver: '1.2.3.4' }, route53: { region: 'x' } }),
      /only one DNS01 provider may be configured, found rfc2136, route53/,
    );
    for (const name of [
      'cloudflare',
      'route53',
      'cloudDNS',
      'azureDNS',
      'digitalocean',
      'acmeDNS',
      'akamai',
      'webhook',
    ]) {
      assert.throws(
        () => registry.select({ [name]: {} }),
        (err: Error) =>
          err instanceof DNS01ConfigError &&
          err.message === `the DNS01 provider "${name}" is not implemented by certkit (implemented: rfc2136)`,
      );
    }
    assert.throws(() => registry.select({ rfc2136: 'x' }), /"rfc2136" must be configured with an object/);
    assert.throws(
      () => new DNS01ProviderRegistry([recordingProvider('a', []), recordingProvider('a', [])]),
      /two/,
    );
  });

  it("reads the controller's Secrets through its getter, decoding data from base64", async () => {
    const reader = secretReaderFrom({
      getWithData: (namespace, name) =>
        Promise.resolve(
          namespace === 'certs' && name === 'tsig'
            ? {
                apiVersion: 'v1',
                kind: 'Secret',
                data: { secret: Buffer.from('c2VjcmV0\n').toString('base64') },
              }
            : undefined,
        ),
    });
    assert.deepEqual(await reader('certs', 'tsig'), { secret: Buffer.from('c2VjcmV0\n') });
    assert.equal(await reader('certs', 'other'), undefined);
    const request = { resourceNamespace: 'certs', secrets: reader };
    assert.equal(
      (await readSecretKey(request, { name: 'tsig', key: 'secret' }, 'x')).toString(),
      'c2VjcmV0\n',
    );
  });

  it('reads Secret values through the injected reader, with errors naming the Secret and key', async () => {
    const request = {
      resourceNamespace: 'team',
      secrets: secretsOf({ 'team/tsig': { secret: 'c2VjcmV0' } }),
    };
    assert.equal((await readSecretKey(request, { name: 'tsig', key: 'secret' }, 'x')).toString(), 'c2VjcmV0');
    assert.equal((await readSecretKey(request, { name: 'tsig' }, 'x', 'secret')).toString(), 'c2VjcmV0');
    await assert.rejects(readSecretKey(request, { name: 'gone', key: 'secret' }, 'rfc2136 TSIG secret'), {
      name: 'DNS01ConfigError',
      message: 'rfc2136 TSIG secret: Secret team/gone not found',
    });
    await assert.rejects(readSecretKey(request, { name: 'tsig', key: 'other' }, 'x'), {
      message: 'x: data entry with key "other" not found in Secret team/tsig',
    });
    await assert.rejects(readSecretKey(request, { name: 'tsig' }, 'x'), {
      message: 'x: key of data in Secret resource must be specified',
    });
  });
});

describe('rfc2136 settings', () => {
  const secrets = secretsOf({
    'certs/tsig': { 'tsig-secret': 'c2VjcmV0c2VjcmV0\n', bad: 'not base64!' },
  });
  const settings = (config: Record<string, unknown>) =>
    rfc2136Settings({ config, secrets, resourceNamespace: 'certs' });

  it('signs with the named key, algorithm and Secret value, over UDP unless told TCP', async () => {
    const got = await settings({
      nameserver: '[::1]:5353',
      tsigKeyName: 'certkit',
      tsigAlgorithm: 'hmacsha512',
      tsigSecretSecretRef: { name: 'tsig', key: 'tsig-secret' },
    });
    assert.deepEqual(got.server, { kind: 'dns', host: '::1', port: 5353 });
    assert.equal(got.protocol, 'udp');
    assert.equal(got.key?.name, 'certkit');
    assert.equal(got.key?.algorithm, TSIG_ALGORITHMS.HMACSHA512);
    assert.deepEqual(got.key?.secret, Buffer.from('secretsecret'));
    assert.equal((await settings({ nameserver: '1.2.3.4', protocol: 'TCP' })).protocol, 'tcp');
  });

  it('defaults to HMACMD5, and sends unsigned without a key name or without a Secret (as cert-manager)', async () => {
    const md5 = await settings({
      nameserver: '1.2.3.4',
      tsigKeyName: 'k',
      tsigSecretSecretRef: { name: 'tsig', key: 'tsig-secret' },
    });
    assert.equal(md5.key?.algorithm, TSIG_ALGORITHMS.HMACMD5);
    assert.equal(
      (await settings({ nameserver: '1.2.3.4', tsigSecretSecretRef: { name: 'tsig', key: 'tsig-secret' } }))
        .key,
      undefined,
    );
    assert.equal((await settings({ nameserver: '1.2.3.4', tsigKeyName: 'k' })).key, undefined);
  });

  it('gives a clear configuration error for each bad field', async () => {
    const refuse = (config: Record<string, unknown>, message: RegExp) =>
      assert.rejects(
        settings(config),
        (err: Error) => err instanceof DNS01ConfigError && message.test(err.message),
      );
    await refuse({}, /rfc2136: nameserver is required/);
    await refuse({ nameserver: '' }, /rfc2136: RFC2136 nameserver missing/);
    await refuse({ nameserver: '1.2.3.4', protocol: 'tcp' }, /protocol must be "TCP" or "UDP", not "tcp"/);
    await refuse(
      { nameserver: '1.2.3.4', tsigAlgorithm: 'HMACSHA3' },
      /TSIG algorithm 'HMACSHA3' is not supported/,
    );
    await refuse(
      { nameserver: '1.2.3.4', tsigKeyName: 'k', tsigSecretSecretRef: { name: 'missing', key: 'k' } },
      /rfc2136 TSIG secret: Secret certs\/missing not found/,
    );
    await refuse(
      { nameserver: '1.2.3.4', tsigKeyName: 'k', tsigSecretSecretRef: { name: 'tsig', key: 'bad' } },
      /error decoding the provided TSIG secret/,
    );
  });
});
