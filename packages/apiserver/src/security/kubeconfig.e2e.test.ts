import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ensureServingCertificates } from './certificates.ts';
import { kubeconfigYaml, writeKubeconfig, yamlString } from './kubeconfig.ts';
import { ensureToken, tokenMatches } from './token.ts';

const run = promisify(execFile);

const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'certkit-kubeconfig-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function findOnPath(command: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, command);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

/**
 * Reads back exactly the shape kubeconfigYaml writes: enough to prove the text is the structure intended,
 * with every scalar decoded from its double-quoted form.
 */
function parseOwnKubeconfig(yaml: string): Record<string, string> {
  const fields: Record<string, string> = {};
  const path: string[] = [];
  for (const line of yaml.split('\n')) {
    if (line === '') continue;
    const match = /^( *)(- )?([a-z-]+):(?: (.*))?$/i.exec(line);
    assert.ok(match, `unexpected line ${JSON.stringify(line)}`);
    const [, indent, item, key, value] = match;
    const depth = (indent.length + (item ? 2 : 0)) / 2;
    path.length = depth;
    path[depth] = key;
    if (value === undefined) continue;
    const decoded = value.startsWith('"') ? JSON.parse(value) : value;
    fields[path.join('.')] = typeof decoded === 'string' ? decoded : JSON.stringify(decoded);
  }
  return fields;
}

describe('kubeconfigYaml', () => {
  it('produces a Config with cluster, user and context named certkit', () => {
    const yaml = kubeconfigYaml({ server: 'https://127.0.0.1:6443', caCertPem: CA_PEM, token: 'abc_-123' });
    assert.deepEqual(parseOwnKubeconfig(yaml), {
      apiVersion: 'v1',
      kind: 'Config',
      'clusters.name': 'certkit',
      'clusters.cluster.server': 'https://127.0.0.1:6443',
      'clusters.cluster.certificate-authority-data': Buffer.from(CA_PEM).toString('base64'),
      'users.name': 'certkit',
      'users.user.token': 'abc_-123',
      'contexts.name': 'certkit',
      'contexts.context.cluster': 'certkit',
      'contexts.context.user': 'certkit',
      'current-context': 'certkit',
      preferences: '{}',
    });
  });

  it('uses the given name everywhere', () => {
    const fields = parseOwnKubeconfig(
      kubeconfigYaml({ server: 'https://[::1]:6443', caCertPem: CA_PEM, token: 't', name: 'dev' }),
    );
    for (const key of ['clusters.name', 'users.name', 'contexts.name', 'contexts.context.cluster']) {
      assert.equal(fields[key], 'dev');
    }
    assert.equal(fields['current-context'], 'dev');
  });

  it('rejects options that cannot make a working kubeconfig', () => {
    assert.throws(() => kubeconfigYaml({ server: 'not a url', caCertPem: CA_PEM, token: 't' }), /not a URL/);
    assert.throws(() => kubeconfigYaml({ server: 'https://x', caCertPem: CA_PEM, token: '' }), /token/);
    assert.throws(
      () => kubeconfigYaml({ server: 'https://x', caCertPem: CA_PEM, token: 't', name: '' }),
      /name/,
    );
  });
});

describe('yamlString', () => {
  it('double-quotes and escapes anything YAML could misread', () => {
    assert.equal(yamlString('yes'), '"yes"');
    assert.equal(yamlString('a: b # c'), '"a: b # c"');
    assert.equal(yamlString('say "hi"\\'), '"say \\"hi\\"\\\\"');
    assert.equal(yamlString('line\nbreak\ttab'), '"line\\nbreak\\ttab"');
    assert.equal(yamlString('\u007f\u0085\u2028\ufeff'), '"\\u007f\\u0085\\u2028\\ufeff"');
    assert.equal(yamlString('ünïcode'), '"ünïcode"');
  });
});

describe('writeKubeconfig', () => {
  it('writes the file with mode 0600, atomically replacing an existing one', async (t) => {
    const dir = await tempDir(t);
    const path = join(dir, 'kubeconfig');
    await writeFile(path, 'old', { mode: 0o644 });
    const options = { server: 'https://127.0.0.1:6443', caCertPem: CA_PEM, token: 'secret' };
    await writeKubeconfig(path, options);
    assert.equal(await readFile(path, 'utf8'), kubeconfigYaml(options));
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    assert.deepEqual(await readdir(dir), ['kubeconfig'], 'no temp files left behind');
  });

  it('creates a missing parent directory', async (t) => {
    const path = join(await tempDir(t), '.kube', 'config');
    await writeKubeconfig(path, { server: 'https://127.0.0.1:6443', caCertPem: CA_PEM, token: 'secret' });
    assert.equal((await stat(path)).mode & 0o777, 0o600);
  });
});

describe('kubeconfig with kubectl', async () => {
  const kubectl = await findOnPath('kubectl');
  const skip = kubectl ? false : 'kubectl is not on PATH';
  if (!kubectl) console.log('# skipping kubectl checks: kubectl is not on PATH');

  /** An empty HOME keeps kubectl away from the real ~/.kube (config and cache). */
  async function kubectlRun(home: string, args: string[]): Promise<string> {
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
    delete env.KUBECONFIG;
    const { stdout } = await run(kubectl!, args, { env, timeout: 30_000 });
    return stdout;
  }

  it('reads back everything the kubeconfig says', { skip }, async (t) => {
    const dir = await tempDir(t);
    const path = join(dir, 'kubeconfig');
    // Characters that would break an unquoted or naively quoted YAML scalar.
    const name = 'dev: "#1" \\ yes';
    await writeKubeconfig(path, {
      server: 'https://127.0.0.1:6443',
      caCertPem: CA_PEM,
      token: 'a:b#c',
      name,
    });
    const view = JSON.parse(
      await kubectlRun(dir, ['config', 'view', '--kubeconfig', path, '--raw', '-o', 'json']),
    );
    assert.equal(view.kind, 'Config');
    assert.equal(view.apiVersion, 'v1');
    assert.equal(view['current-context'], name);
    assert.deepEqual(view.clusters, [
      {
        name,
        cluster: {
          server: 'https://127.0.0.1:6443',
          'certificate-authority-data': Buffer.from(CA_PEM).toString('base64'),
        },
      },
    ]);
    assert.deepEqual(view.users, [{ name, user: { token: 'a:b#c' } }]);
    assert.deepEqual(view.contexts, [{ name, context: { cluster: name, user: name } }]);
  });

  it('lets kubectl reach a server using the generated certificates and token', { skip }, async (t) => {
    const dir = await tempDir(t);
    const certs = await ensureServingCertificates(dir, []);
    const token = await ensureToken(dir);
    const server = createServer({ cert: certs.certPem, key: certs.keyPem }, (request, response) => {
      if (!tokenMatches(token, request.headers.authorization)) {
        response.writeHead(401, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            message: 'Unauthorized',
            reason: 'Unauthorized',
            code: 401,
          }),
        );
        return;
      }
      response.end(`ok ${request.url}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => {
      server.closeAllConnections();
      server.close();
    });
    const { port } = server.address() as AddressInfo;

    const good = join(dir, 'good.kubeconfig');
    await writeKubeconfig(good, { server: `https://127.0.0.1:${port}`, caCertPem: certs.caCertPem, token });
    assert.equal(await kubectlRun(dir, ['--kubeconfig', good, 'get', '--raw', '/healthz']), 'ok /healthz');

    // kubectl checks the server's name against the certificate too, so try it by name as well as by IP.
    const byName = join(dir, 'by-name.kubeconfig');
    await writeKubeconfig(byName, { server: `https://localhost:${port}`, caCertPem: certs.caCertPem, token });
    assert.equal(await kubectlRun(dir, ['--kubeconfig', byName, 'get', '--raw', '/healthz']), 'ok /healthz');

    const wrongToken = join(dir, 'wrong-token.kubeconfig');
    await writeKubeconfig(wrongToken, {
      server: `https://127.0.0.1:${port}`,
      caCertPem: certs.caCertPem,
      token: `${token}x`,
    });
    await assert.rejects(
      kubectlRun(dir, ['--kubeconfig', wrongToken, 'get', '--raw', '/healthz']),
      (error: Error) => {
        assert.match((error as Error & { stderr: string }).stderr, /Unauthorized/);
        return true;
      },
    );

    const otherCa = await ensureServingCertificates(join(dir, 'other'), []);
    const wrongCa = join(dir, 'wrong-ca.kubeconfig');
    await writeKubeconfig(wrongCa, {
      server: `https://127.0.0.1:${port}`,
      caCertPem: otherCa.caCertPem,
      token,
    });
    await assert.rejects(
      kubectlRun(dir, ['--kubeconfig', wrongCa, 'get', '--raw', '/healthz']),
      (error: Error) => {
        assert.match((error as Error & { stderr: string }).stderr, /certificate/i);
        return true;
      },
    );
  });
});
