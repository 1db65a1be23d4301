import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import type { Certificate, Issuer } from '@certkit/certificates/api/types';
import { certificateRequestsRef, certificatesRef, issuersRef } from '@certkit/certificates/controllers/refs';
import { builtins, KubeClient, loadKubeconfig } from '@certkit/runtime';
import { CERTKIT_BIN, certkitEnv, type RunningCli, runCli, startCli } from '@certkit/testenv/cli/cli-process';
import { type Command, COMMANDS } from './command-table.ts';

/**
 * The CLI's conventions, with `certkit` as a process as users run it: -h/--help on every command of the table,
 * version, what -v and --log-level make the long-running commands log (and under which keys), `status
 * certificate NAME` and -o on a live `certkit up`, and the completion scripts sourced by a real bash and zsh.
 */

const execFileAsync = promisify(execFile);

/** Every command path of the table, with its command: ['up'], ['secrets'], ['secrets', 'audit'], ... */
function commandPaths(commands: readonly Command[] = COMMANDS, prefix: string[] = []): [string[], Command][] {
  return commands.flatMap((c) => [
    [[...prefix, c.name], c] as [string[], Command],
    ...commandPaths(c.subcommands ?? [], [...prefix, c.name]),
  ]);
}

function oneLineError(result: { code: number; stderr: string }, what: string): void {
  assert.equal(result.code, 2, `${what}: ${result.stderr}`);
  assert.equal(result.stderr.trim().split('\n').length, 1, `${what}: ${result.stderr}`);
  assert.match(result.stderr, /^certkit: /, what);
}

describe('certkit --help and -h', () => {
  it('every command and subcommand prints its usage and each of its flags, exit 0, for --help and -h', async () => {
    const paths = commandPaths();
    assert.ok(paths.length >= 10, `only ${paths.length} commands in the table`);
    for (const [path, command] of paths) {
      for (const help of ['--help', '-h']) {
        const result = await runCli([...path, help]);
        const what = `certkit ${path.join(' ')} ${help}`;
        assert.equal(result.code, 0, `${what}: ${result.stderr}`);
        assert.equal(result.stderr, '', what);
        assert.match(result.stdout, new RegExp(`^usage: certkit ${path.join(' ')}\\b`), what);
        for (const [name, spec] of Object.entries(command.flags)) {
          const synopsis = spec.short ? `-${spec.short}, --${name}` : `--${name}`;
          assert.ok(result.stdout.includes(synopsis), `${what} does not mention ${synopsis}`);
        }
        for (const sub of command.subcommands ?? []) {
          assert.match(result.stdout, new RegExp(`^  ${sub.name} `, 'm'), `${what} lists ${sub.name}`);
        }
      }
    }
  });

  it('help after other flags, and `certkit help COMMAND`, print the same help', async () => {
    const direct = await runCli(['status', '--help']);
    assert.equal((await runCli(['status', '-n', 'x', '-o', 'wide', '--help'])).stdout, direct.stdout);
    assert.equal((await runCli(['help', 'status'])).stdout, direct.stdout);
    assert.equal(
      (await runCli(['help', 'secrets', 'audit'])).stdout,
      (await runCli(['secrets', 'audit', '-h'])).stdout,
    );
    const top = await runCli(['--help']);
    assert.equal(top.code, 0);
    for (const command of COMMANDS) assert.match(top.stdout, new RegExp(`^  ${command.name} `, 'm'));
  });

  it('an unknown flag, command or subcommand still fails with one line and exit 2', async () => {
    for (const [path] of commandPaths().filter(([, c]) => c.run)) {
      const result = await runCli([...path, '--no-such-flag']);
      oneLineError(result, `certkit ${path.join(' ')} --no-such-flag`);
      assert.equal(
        result.stderr,
        `certkit: unknown flag: --no-such-flag (see "certkit ${path.join(' ')} --help")\n`,
      );
    }
    oneLineError(await runCli(['frobnicate']), 'certkit frobnicate');
    oneLineError(await runCli(['secrets', 'frobnicate']), 'certkit secrets frobnicate');
    oneLineError(await runCli(['completion', 'powershell']), 'certkit completion powershell');
    oneLineError(await runCli(['--no-such-flag']), 'certkit --no-such-flag');
    oneLineError(await runCli(['secrets', 'audit', 'stray']), 'certkit secrets audit stray');
    oneLineError(await runCli(['controller', 'stray']), 'certkit controller stray');
    oneLineError(await runCli(['version', 'stray']), 'certkit version stray');
    // The commands whose flag parser refuses positionals say so in the CLI's words, naming their help.
    for (const path of [['up'], ['apiserver'], ['version'], ['completion', 'bash']]) {
      const stray = await runCli([...path, 'stray']);
      oneLineError(stray, `certkit ${path.join(' ')} stray`);
      assert.equal(
        stray.stderr,
        `certkit: unexpected argument "stray": this command takes flags only (see "certkit ${path.join(' ')} --help")\n`,
      );
    }
    oneLineError(await runCli(['up', '--log-level', 'loud']), 'certkit up --log-level loud');
    oneLineError(await runCli(['controller', '-v', 'many']), 'certkit controller -v many');
    oneLineError(await runCli(['controller', '-n', 'a', '-A']), 'certkit controller -n a -A');
    // cert-manager's --controllers, a name it does not know: its words, before anything starts.
    for (const command of ['controller', 'up']) {
      const unknown = await runCli([command, '--controllers=*,-certificaterequests-aprover']);
      oneLineError(unknown, `certkit ${command} --controllers=*,-certificaterequests-aprover`);
      assert.match(
        unknown.stderr,
        /--controllers: "certificaterequests-aprover" is not in the list of known controllers/,
      );
    }
  });
});

describe('certkit version', () => {
  it('prints the package version and Node’s, as text, JSON or YAML; --version is the same', async () => {
    const { version } = (await import('../package.json', { with: { type: 'json' } })).default;
    const text = await runCli(['version']);
    assert.equal(text.code, 0);
    assert.equal(
      text.stdout,
      `certkit ${version} (Node.js ${process.version}, ${process.platform}/${process.arch})\n`,
    );
    assert.equal((await runCli(['--version'])).stdout, text.stdout);
    const expected = {
      clientVersion: {
        version,
        nodeVersion: process.version,
        platform: `${process.platform}/${process.arch}`,
      },
    };
    assert.deepEqual(JSON.parse((await runCli(['version', '-o', 'json'])).stdout), expected);
    assert.deepEqual(parseYaml((await runCli(['version', '--output=yaml'])).stdout), expected);
    oneLineError(await runCli(['version', '-o', 'xml']), 'certkit version -o xml');
  });

  it("takes cmctl's --client (the client is all certkit reports) and --short (Client Version: vX.Y.Z)", async () => {
    const { version } = (await import('../package.json', { with: { type: 'json' } })).default;
    assert.equal((await runCli(['version', '--client'])).stdout, (await runCli(['version'])).stdout);
    const short = await runCli(['version', '--short', '--client']);
    assert.equal(short.code, 0, short.stderr);
    assert.equal(short.stdout, `Client Version: v${version}\n`);
  });
});

/** The JSON lines a process wrote on stderr (other lines, such as the warnings of `certkit:`, left out). */
function logLines(stderr: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('certkit logs: --log-level and -v', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-logs-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Runs `certkit ARGS` on the data dir, sends one request through kubectl-like client code, stops it. */
  async function logsOf(args: string[]): Promise<Record<string, unknown>[]> {
    const cli = await startCli([...args, '--data-dir', dir, '--port', '0']);
    const client = new KubeClient({ ...(await loadKubeconfig({ path: join(dir, 'kubeconfig') })), qps: -1 });
    try {
      await client.resource(builtins.namespaces).list(undefined);
    } finally {
      client.close();
    }
    assert.equal(await cli.stop('SIGTERM'), 0);
    return logLines(cli.stderr());
  }

  const requestLog = (lines: Record<string, unknown>[]) =>
    lines.filter((l) => l.msg === 'HTTP' && l.path === '/api/v1/namespaces');

  it('without flags: no request log and no info lines', async () => {
    const lines = await logsOf(['up']);
    assert.deepEqual(requestLog(lines), []);
    assert.deepEqual(
      lines.filter((l) => l.level === 'info' || l.level === 'debug'),
      [],
    );
  });

  it('-v 3 (and --v=3): the request log, at kube-apiserver’s httplog verbosity, under the common keys', async () => {
    for (const flag of [['-v', '3'], ['--v=3']]) {
      const lines = await logsOf(['apiserver', ...flag]);
      const [line] = requestLog(lines);
      assert.ok(line, `${flag.join(' ')}: no request log in ${JSON.stringify(lines).slice(0, 500)}`);
      assert.deepEqual(Object.keys(line).slice(0, 4), ['ts', 'level', 'logger', 'v']);
      assert.equal(line.logger, 'apiserver');
      assert.equal(line.v, 3);
      assert.equal(line.verb, 'list');
      assert.equal(line.code, 200);
      assert.ok(!Number.isNaN(Date.parse(line.ts as string)));
      // No debug entry but the request log's at -v 3.
      assert.deepEqual(
        lines.filter((l) => l.level === 'debug' && l.msg !== 'HTTP'),
        [],
      );
    }
  });

  it('-v 2: info lines from the controller, named, but no request log', async () => {
    const lines = await logsOf(['up', '-v', '2']);
    assert.deepEqual(requestLog(lines), []);
    const info = lines.filter((l) => l.level === 'info');
    assert.ok(info.length > 0, 'no info lines at -v 2');
    for (const line of lines) {
      assert.deepEqual(Object.keys(line).slice(0, 3), ['ts', 'level', 'logger'], JSON.stringify(line));
      assert.match(String(line.logger), /^(apiserver|controller|cainjector)(\.|$)/);
      assert.equal(typeof line.msg, 'string');
      assert.equal('time' in line || 'error' in line || 'component' in line, false, JSON.stringify(line));
    }
    assert.ok(info.some((l) => l.logger === 'controller'));
  });

  it('--log-level error: nothing but errors, even at -v 2', async () => {
    const lines = await logsOf(['up', '--log-level', 'error', '-v', '2']);
    assert.deepEqual(
      lines.filter((l) => l.level !== 'error'),
      [],
    );
  });

  it('--log-level debug: the request log too', async () => {
    assert.equal(requestLog(await logsOf(['apiserver', '--log-level', 'debug'])).length, 1);
  });
});

describe('certkit status', () => {
  let dir: string;
  let kubeconfig: string;
  let cli: RunningCli;
  let admin: KubeClient;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certkit-status-'));
    cli = await startCli(['up', '--data-dir', dir, '--port', '0']);
    kubeconfig = join(dir, 'kubeconfig');
    admin = new KubeClient({ ...(await loadKubeconfig({ path: kubeconfig })), qps: -1 });
    const issuers = admin.resource<Issuer>(issuersRef);
    const certificates = admin.resource<Certificate>(certificatesRef);
    // `up` installs the CRDs as it starts; wait until they are served.
    for (let attempt = 0; ; attempt++) {
      try {
        await issuers.list('default', { limit: 1 });
        break;
      } catch (err) {
        if (attempt > 300) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await issuers.create('default', {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'selfsigned', namespace: 'default' },
      spec: { selfSigned: {} },
    } as Issuer);
    for (const name of ['web', 'api']) {
      await certificates.create('default', {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name, namespace: 'default' },
        spec: {
          secretName: `${name}-tls`,
          dnsNames: [`${name}.example.test`],
          issuerRef: { name: 'selfsigned' },
        },
      } as Certificate);
    }
    for (let attempt = 0; ; attempt++) {
      const ready = (await certificates.list('default')).items.filter((c) =>
        c.status?.conditions?.some((k) => k.type === 'Ready' && k.status === 'True'),
      );
      if (ready.length === 2) break;
      if (attempt > 600) throw new Error('the Certificates did not become Ready in 30 s');
      await new Promise((r) => setTimeout(r, 50));
    }
  });

  after(async () => {
    admin?.close();
    await cli?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const status = (...args: string[]) =>
    runCli(['status', '--kubeconfig', kubeconfig, '-n', 'default', ...args]);

  it('status certificate NAME: that one Certificate with its conditions, Issuer, Secret and CertificateRequest', async () => {
    const result = await status('certificate', 'web');
    assert.equal(result.code, 0, result.stderr);
    const out = result.stdout;
    assert.match(out, /^Name: web\nNamespace: default\n/);
    assert.match(out, /^ {2}Ready: True, Reason: Ready, Message: /m);
    assert.match(
      out,
      /^DNS Names:\n- web\.example\.test\nEvents:\n {2}Type +Reason +Last Seen +From +Message\n/m,
    );
    assert.match(
      out,
      /^ {2}Normal +Requested +\S+ +\S+ +Created new CertificateRequest resource "web-\w+"$/m,
    );
    assert.match(out, /^Issuer:\n {2}Name: selfsigned\n {2}Kind: Issuer\n {2}Conditions:\n {4}Ready: True/m);
    assert.match(out, /^Secret:\n {2}Name: web-tls\n/m);
    assert.match(out, /^ {2}Subject Alternative Names: DNS:web\.example\.test$/m);
    // cmctl's lines, in its order and words, then certkit's.
    assert.match(
      out,
      /^ {2}Name: web-tls\n {2}Issuer Country: \n {2}Issuer Organisation: \n {2}Issuer Common Name: \S*\n {2}Key Usage: Digital Signature, Key Encipherment\n {2}Extended Key Usages: \n {2}Public Key Algorithm: (RSA|ECDSA)\n {2}Signature Algorithm: (SHA256-RSA|ECDSA-SHA256)\n {2}Subject Key ID: [0-9a-f]*\n {2}Authority Key ID: [0-9a-f]*\n {2}Serial Number: [0-9a-f]+\n/m,
    );
    assert.match(out, /^Not After: \d{4}-\d\d-\d\dT/m);
    assert.match(
      out,
      /^CertificateRequest:\n {2}Name: web-\w+\n {2}Namespace: default\n {2}Revision: 1 \(issued the current certificate\)/m,
    );
    assert.match(out, /^ {4}Approved: True/m);
    assert.doesNotMatch(out, /\bapi\b/, 'it shows the other Certificate too');
  });

  it("status certificate NAME: an issuer or Secret that is missing, in cmctl's lines", async () => {
    // In a namespace of their own, so that the listings of `default` stay as the other tests expect.
    const ns = 'lost-things';
    await admin.resource(builtins.namespaces).create(undefined, { metadata: { name: ns } });
    const certificates = admin.resource<Certificate>(certificatesRef);
    const lost = (name: string, issuerRef: Certificate['spec']['issuerRef']) =>
      certificates.create(ns, {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name, namespace: ns },
        spec: { secretName: `${name}-tls`, dnsNames: [`${name}.example.test`], issuerRef },
      } as Certificate);
    await lost('lost', { name: 'nowhere' });
    await lost('lost-cluster', { name: 'nowhere', kind: 'ClusterIssuer' });
    await lost('external', { name: 'vault', kind: 'VaultIssuer', group: 'vault.example.com' });
    const shown = async (name: string) => {
      const result = await runCli(['status', '--kubeconfig', kubeconfig, '-n', ns, 'certificate', name]);
      assert.equal(result.code, 0, result.stderr);
      return result.stdout;
    };
    const lostOut = await shown('lost');
    assert.match(lostOut, /^error when getting Issuer: issuers\.cert-manager\.io "nowhere" not found\n/m);
    assert.match(lostOut, /^error when finding Secret "lost-tls": secrets "lost-tls" not found\n/m);
    assert.doesNotMatch(lostOut, /^Issuer:$/m);
    assert.match(
      await shown('lost-cluster'),
      /^error when getting ClusterIssuer: clusterissuers\.cert-manager\.io "nowhere" not found\n/m,
    );
    // A Certificate whose requests are gone (deleted by hand, or never made: a Secret taken over as it was):
    // cmctl's sentence for none.
    await admin.resource<Issuer>(issuersRef).create(ns, {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Issuer',
      metadata: { name: 'selfsigned', namespace: ns },
      spec: { selfSigned: {} },
    } as Issuer);
    await lost('kept', { name: 'selfsigned' });
    const requests = admin.resource(certificateRequestsRef);
    for (let attempt = 0; ; attempt++) {
      const cert = await certificates.get(ns, 'kept');
      if (cert.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) break;
      if (attempt > 600) throw new Error('Certificate kept did not become Ready in 30 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    for (const cr of (await requests.list(ns)).items) await requests.delete(ns, cr.metadata?.name ?? '');
    assert.match(await shown('kept'), /^No CertificateRequest found for this Certificate$/m);
    assert.match(
      await shown('external'),
      /^The VaultIssuer "vault" is not of the group cert-manager\.io, this command currently does not support third party issuers\.\nTo get more information about "vault", try 'kubectl describe'\n/m,
    );
  });

  it('status certificate NAME -o json|yaml: the Certificate object', async () => {
    const json = JSON.parse((await status('certificate', 'web', '-o', 'json')).stdout) as Certificate;
    assert.equal(json.kind, 'Certificate');
    assert.equal(json.metadata.name, 'web');
    const yaml = parseYaml((await status('certificate', 'web', '--output=yaml')).stdout) as Certificate;
    assert.deepEqual(yaml, json);
  });

  it('status certificate MISSING: exit 1 with one line', async () => {
    const result = await status('certificate', 'nope');
    assert.equal(result.code, 1);
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    // cmctl's words.
    assert.equal(
      result.stderr,
      'certkit: error when getting Certificate resource: certificates.cert-manager.io "nope" not found\n',
    );
  });

  it('a namespace without Certificates: kubectl’s words on stderr, nothing on stdout, exit 0', async () => {
    for (const args of [[], ['-o', 'wide'], ['-o', 'name']]) {
      const result = await runCli(['status', '--kubeconfig', kubeconfig, '-n', 'empty', ...args]);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, '', args.join(' '));
    }
    const table = await runCli(['status', '--kubeconfig', kubeconfig, '-n', 'empty']);
    assert.equal(table.stderr, 'No certificates found in empty namespace.\n');
  });

  it('the listing: a table, -o wide with more columns, -o json|yaml a List', async () => {
    const table = await status();
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^NAMESPACE +NAME +READY +ISSUER +NOT-AFTER +RENEWAL-TIME\n/);
    assert.equal(table.stdout.trim().split('\n').length, 3);
    const wide = await status('-o', 'wide');
    assert.match(
      wide.stdout,
      /^NAMESPACE +NAME +READY +ISSUER +NOT-AFTER +RENEWAL-TIME +SECRET +REVISION +REASON\n/,
    );
    assert.match(wide.stdout, /^default +web +True +Issuer\/selfsigned +\S+ +\S+ +web-tls +1 +Ready$/m);
    assert.deepEqual((await status('certificates')).stdout, table.stdout);
    // pflag's boolean values, as scripts written for kubectl say them.
    assert.deepEqual((await status('--all-namespaces=true')).stdout, (await status('-A')).stdout);
    const list = JSON.parse((await status('-o', 'json')).stdout) as { kind: string; items: Certificate[] };
    assert.equal(list.kind, 'List');
    assert.deepEqual(list.items.map((c) => c.metadata.name).sort(), ['api', 'web']);
    assert.deepEqual(parseYaml((await status('-o', 'yaml')).stdout), list);
  });

  it('-o name: kubectl’s resource/name lines', async () => {
    const names = await status('-o', 'name');
    assert.equal(names.code, 0, names.stderr);
    assert.deepEqual(names.stdout.split('\n').filter(Boolean).sort(), [
      'certificate.cert-manager.io/api',
      'certificate.cert-manager.io/web',
    ]);
  });

  it('completion: bash, zsh and fish offer the Certificates of the namespace the command line names', async (t) => {
    const onPath = await certkitOnPath();
    try {
      const flags = `--kubeconfig ${JSON.stringify(kubeconfig)} -n default`;
      const bash = await shell(
        'bash',
        `source <(certkit completion bash)
${BASH_T}
t certkit status ${flags} certificate ''
t certkit renew ${flags} w
t certkit renew --kubeconfig ${JSON.stringify(kubeconfig)} -n kube-system ''
t certkit status ${flags} ''`,
        onPath.env,
      );
      const [status, renew, otherNamespace, beforeKind] = bash.split('\n').map((l) => l.split(' '));
      assert.deepEqual(status, ['api', 'web']);
      assert.deepEqual(renew, ['web']);
      // No Certificates in kube-system: renew's flags only; and names only after `certificate` for status.
      assert.ok(
        otherNamespace.includes('--all') && !otherNamespace.includes('web'),
        otherNamespace.join(' '),
      );
      assert.ok(beforeKind.includes('certificate') && !beforeKind.includes('web'), beforeKind.join(' '));
      if (await skipWithoutZsh(t)) return;
      const zsh = await shell(
        'zsh',
        `autoload -U compinit && compinit -u
source <(certkit completion zsh)
${ZSH_T}
t certkit status ${flags} certificate ''`,
        onPath.env,
      );
      assert.equal(zsh.split('\n')[0], 'api web');
      if (await skipWithoutFish(t)) return;
      const fish = await shell(
        'fish',
        `certkit completion fish | source
complete -C'certkit status ${flags} certificate '`,
        onPath.env,
      );
      assert.deepEqual(fish.split('\n').filter(Boolean), ['api', 'web']);
    } finally {
      await onPath.remove();
    }
  });

  it('refuses another kind, an unknown -o, and a NAME with -A', async () => {
    oneLineError(await status('issuer'), 'status issuer');
    oneLineError(await status('-o', 'xml'), 'status -o xml');
    oneLineError(await status('certificate', 'web', '-A'), 'status certificate web -A');
  });
});

/** `certkit` on PATH, as an installed one is: a script that runs bin/certkit.js over the build. */
async function certkitOnPath(): Promise<{ env: NodeJS.ProcessEnv; remove(): Promise<void> }> {
  const bin = await mkdtemp(join(tmpdir(), 'certkit-completion-'));
  await writeFile(
    join(bin, 'certkit'),
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(CERTKIT_BIN)} "$@"\n`,
  );
  await chmod(join(bin, 'certkit'), 0o755);
  const base = certkitEnv();
  return {
    env: { ...base, PATH: `${bin}:${base.PATH}` },
    remove: () => rm(bin, { recursive: true, force: true }),
  };
}

async function shell(file: string, script: string, env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await execFileAsync(file, ['-c', script], { env, timeout: 30_000 });
  return stdout;
}

/** Bash's completion of the words given (the last one being completed), one line of candidates a call of `t`. */
const BASH_T = `t() { COMP_WORDS=("$@"); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _certkit; echo "\${COMPREPLY[*]}"; }`;
/** The same in zsh: compadd is a builtin of completion widgets; a function of its name stands in outside one. */
const ZSH_T = `compadd() { [[ $1 == -- ]] && shift; print -r -- "$@"; }
t() { words=("$@"); CURRENT=\${#words}; _certkit; }`;

let zshMissing: boolean | undefined;
async function skipWithoutZsh(t: { skip(message: string): void }): Promise<boolean> {
  zshMissing ??= await execFileAsync('zsh', ['-c', 'true']).then(
    () => false,
    () => true,
  );
  if (zshMissing) t.skip('zsh is not installed (Debian package zsh)');
  return zshMissing;
}

let fishMissing: boolean | undefined;
async function skipWithoutFish(t: { skip(message: string): void }): Promise<boolean> {
  fishMissing ??= await execFileAsync('fish', ['-c', 'true']).then(
    () => false,
    () => true,
  );
  if (fishMissing) t.skip('fish is not installed (Debian package fish)');
  return fishMissing;
}

describe('certkit completion', () => {
  let onPath: Awaited<ReturnType<typeof certkitOnPath>>;
  before(async () => {
    onPath = await certkitOnPath();
  });
  after(async () => {
    await onPath.remove();
  });

  it('bash: sourcing the script registers it, and it completes commands, subcommands, flags and values', async () => {
    const out = await shell(
      'bash',
      `source <(certkit completion bash)
complete -p certkit
${BASH_T}
t certkit st
t certkit secrets ''
t certkit status -o ''
t certkit up --wat
t certkit up --storage ''
t certkit controller --log-level ''
t certkit status -n ''
t certkit completion ''
t certkit renew -n default --`,
      onPath.env,
    );
    const [registered, ...completions] = out.split('\n');
    assert.equal(registered, 'complete -F _certkit certkit');
    assert.deepEqual(completions.slice(0, 8), [
      'status',
      'audit --help -h',
      'json yaml wide name',
      '--watch-cache',
      'sqlite etcd',
      'error warn info debug',
      '',
      'bash zsh fish --help -h',
    ]);
    const renewFlags = completions[8].split(' ');
    for (const name of Object.keys(COMMANDS.find((c) => c.name === 'renew')!.flags)) {
      assert.ok(renewFlags.includes(`--${name}`), `renew --${name} not offered`);
    }
  });

  it('zsh: sourcing the script after compinit registers _certkit, which offers the same words', async (t) => {
    if (await skipWithoutZsh(t)) return;
    const out = await shell(
      'zsh',
      `autoload -U compinit && compinit -u
source <(certkit completion zsh)
print -r -- $_comps[certkit]
${ZSH_T}
t certkit st
t certkit secrets ''
t certkit status -o ''
t certkit up --storage ''`,
      onPath.env,
    );
    assert.deepEqual(out.split('\n').slice(0, 5), [
      '_certkit',
      COMMANDS.map((c) => c.name).join(' ') + ' help --help -h --version',
      'audit --help -h',
      'json yaml wide name',
      'sqlite etcd',
    ]);
  });

  it('fish: the script registers a completion of certkit, which offers the same words and values', async (t) => {
    if (await skipWithoutFish(t)) return;
    const out = await shell(
      'fish',
      `certkit completion fish | source
for line in 'certkit st' 'certkit secrets ' 'certkit status -o ' 'certkit up --storage ' 'certkit completion '
    echo (complete -C$line | string split -f1 \\t)
end`,
      onPath.env,
    );
    assert.deepEqual(out.split('\n').slice(0, 5), [
      'status',
      'audit -h --help',
      'json name wide yaml',
      'etcd sqlite',
      'bash fish zsh -h --help',
    ]);
  });
});
