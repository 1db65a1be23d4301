import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CERTKIT_BIN, certkitEnv, type RunningCli, startCli } from '@certkit/testenv/cli/cli-process';

/**
 * The README's "A short tour", run as printed: its shell block, line by line, in a directory where `certkit
 * up` keeps its default data dir `.certkit/` and `examples/` is the repository's. Only `npx certkit` is
 * replaced, by the compiled bin/certkit.js that npx would run. Every line must succeed and say nothing on
 * stderr, so a command the README shows that does not work as printed fails here.
 */

const here = dirname(fileURLToPath(import.meta.url));
const repository = join(here, '../../..');
const run = promisify(execFile);
const hasKubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0;
const skip = hasKubectl ? false : 'kubectl is not on PATH';
if (skip) console.log(`# skipping the README tour: ${skip}`);

/** The commands of the first shell block under `heading`, without comments. */
function shellBlock(markdown: string, heading: string): string[] {
  const section = markdown.slice(markdown.indexOf(`\n${heading}\n`));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  assert.ok(block, `no shell block under ${heading}`);
  return block[1]
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

describe('the README tour, as printed', { skip }, () => {
  let cwd: string;
  let up: RunningCli;

  before(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'certkit-readme-tour-'));
    await symlink(join(repository, 'examples'), join(cwd, 'examples'));
    // What `npm start` runs, on a free port instead of 6443, with the default data dir .certkit/ in `cwd`.
    up = await startCli(['up', '--port', '0'], { cwd });
  });

  after(async () => {
    await up?.stop('SIGINT');
    await rm(cwd, { recursive: true, force: true });
  });

  it('every command of "A short tour" works and prints what its comment says', async () => {
    const lines = shellBlock(await readFile(join(repository, 'README.md'), 'utf8'), '## A short tour');
    assert.equal(lines[0], 'export KUBECONFIG=.certkit/kubeconfig');
    const env = { ...certkitEnv(), KUBECONFIG: '.certkit/kubeconfig', KUBECACHEDIR: join(cwd, 'kube-cache') };
    const outputs = new Map<string, string>();
    for (const line of lines.slice(1)) {
      const command = line.replace(/^npx certkit\b/, `"${process.execPath}" "${CERTKIT_BIN}"`);
      if (line === 'kubectl get certificates') {
        // "Ready within a second or two": given ten on a loaded machine.
        await run('kubectl', ['wait', '--for=condition=Ready', 'certificates', '--all', '--timeout=10s'], {
          cwd,
          env,
        });
      }
      const result = await run('/bin/sh', ['-c', command], { cwd, env }).catch(
        (err: { code: number; stdout: string; stderr: string }) => err,
      );
      assert.equal('code' in result ? result.code : 0, 0, `${line}: ${result.stderr}`);
      assert.equal(result.stderr, '', line);
      outputs.set(line, result.stdout);
    }
    // The Certificates a renew line asked for: one the line before still issues is said to be, as cmctl does.
    const issued = (line: string) =>
      [
        ...(outputs.get(line) ?? '').matchAll(
          /^(?:Manually triggered issuance of Certificate (\S+)|certificate (\S+) is already being issued)$/gm,
        ),
      ]
        .map((m) => m[1] ?? m[2])
        .sort();
    assert.deepEqual(issued('npx certkit renew web'), ['default/web']);
    assert.deepEqual(issued('npx certkit renew --all -A'), [
      'default/client',
      'default/ephemeral',
      'default/root-ca',
      'default/web',
    ]);
    assert.deepEqual(issued('npx certkit renew -l app=web'), ['default/web']);
    assert.match(outputs.get('kubectl get certificates')!, /^web\s+True\s+web-tls/m);
    assert.match(outputs.get('npx certkit status')!, /^default\s+web\s+True\s+Issuer\/example-ca/m);
    assert.match(outputs.get('kubectl get secret web-tls -o yaml')!, /^ {2}tls\.crt: /m);
    assert.match(outputs.get('npx certkit secrets audit')!, /^Every Secret referenced .* is labelled/);
  });
});
