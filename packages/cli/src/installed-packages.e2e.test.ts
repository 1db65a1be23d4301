import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { copyFile, mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { callApi, type RunningCli, startCli } from '@certkit/testenv/cli/cli-process';
import { eventually } from '@certkit/testenv/eventually';
import { majorOf, nodeBinary } from '@certkit/testenv/packaging/node-lines';
import { userEnv } from '@certkit/testenv/packaging/npm';
import {
  installTarballs,
  type PackedPackage,
  packWorkspaces,
  PUBLISHED_PACKAGES,
} from '@certkit/testenv/packaging/tarballs';

/**
 * The packages as software people install (issue 18): `npm pack` of each, `npm install` of the tarballs into
 * an empty directory, and there, on each Node.js line a user may have (22, 24, 26), `npx certkit` and the
 * example controller of examples/configmap-copier, written against the public API alone, against `certkit
 * up`. The registry supplies the third-party dependencies, and the `node` package the other Node lines
 * (cached across runs: see @certkit/testenv/packaging/node-lines).
 */

const here = dirname(fileURLToPath(import.meta.url));
const EXAMPLE = join(here, '../../../examples/configmap-copier/controller.ts');
const README = join(here, '../../../README.md');
const COPY_LABEL = 'configmap-copier.example.com/copy';
const NODE_LINES = [22, 24, 26];
/** A line the packages' engines exclude: the command must say which Node it needs. */
const TOO_OLD = 20;
const run = promisify(execFile);

/** The README's controller skeleton: the TypeScript block of its "Write your own controller". */
function readmeSkeleton(markdown: string): string {
  const section = markdown.slice(markdown.indexOf('\n## Write your own controller\n'));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  assert.ok(block, 'no TypeScript block under "Write your own controller" in README.md');
  return block[1];
}

describe('the packages installed from their tarballs', () => {
  let packed: PackedPackage[];
  let project: string;
  let dataDir: string;
  let server: RunningCli;
  const nodes = new Map<number, string>();

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'certkit-installed-'));
    // The server as the repository runs it; packing, installing and fetching Node lines meanwhile.
    const serverStarted = startCli(['up', '--data-dir', dataDir, '--port', '0']);
    const lines = Promise.all(
      [...NODE_LINES, TOO_OLD].map(async (major) => nodes.set(major, await nodeBinary(major))),
    );
    packed = await packWorkspaces();
    project = await installTarballs(packed.map((p) => p.tarball));
    await copyFile(EXAMPLE, join(project, 'controller.ts'));
    await writeFile(join(project, 'readme-skeleton.ts'), readmeSkeleton(await readFile(README, 'utf8')));
    [server] = await Promise.all([serverStarted, lines]);
  });

  after(async () => {
    await server?.stop();
    await rm(dataDir, { recursive: true, force: true });
    if (project) await rm(project, { recursive: true, force: true });
    if (packed?.[0]) await rm(dirname(packed[0].tarball), { recursive: true, force: true });
  });

  it('npm pack ships the compiled code, declarations, README and LICENSE, and no sources or tests', () => {
    assert.deepEqual(packed.map((p) => p.name).sort(), PUBLISHED_PACKAGES.map((p) => `@certkit/${p}`).sort());
    for (const pkg of packed) {
      const where = `${pkg.name}: ${pkg.files.join(' ')}`;
      for (const file of ['package.json', 'README.md', 'LICENSE']) assert.ok(pkg.files.includes(file), where);
      assert.deepEqual(
        pkg.files.filter((f) => !f.startsWith('dist/') && !f.startsWith('bin/')),
        ['LICENSE', 'README.md', 'package.json'],
        where,
      );
      assert.ok(
        !pkg.files.some((f) => /\.test\.|(^|\/)src\/|\.tsbuildinfo$|\.source-digest$|\.map$/.test(f)),
        where,
      );
      assert.ok(
        pkg.files.some((f) => f.endsWith('.js')) && pkg.files.some((f) => f.endsWith('.d.ts')),
        where,
      );
    }
    const cli = packed.find((p) => p.name === '@certkit/cli')!;
    assert.ok(cli.files.includes('bin/certkit.js') && cli.files.includes('dist/main.js'));
    for (const name of ['apimachinery', 'runtime']) {
      const pkg = packed.find((p) => p.name === `@certkit/${name}`)!;
      assert.ok(pkg.files.includes('dist/index.js') && pkg.files.includes('dist/index.d.ts'), name);
    }
  });

  it('installs each @certkit package once, from its tarball, with its license and engines', async () => {
    for (const name of PUBLISHED_PACKAGES) {
      const dir = join(project, 'node_modules', '@certkit', name);
      await assert.rejects(
        readlink(dir),
        { code: 'EINVAL' },
        `${name} is a copy, not a link into the repository`,
      );
      const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8'));
      assert.equal(manifest.private, false);
      assert.equal(manifest.license, 'Apache-2.0');
      assert.match(manifest.version, /^0\./);
      assert.match(manifest.engines.node, /^>=22\./);
      for (const [dep, range] of Object.entries(manifest.dependencies ?? {})) {
        if (dep.startsWith('@certkit/')) assert.equal(range, `^${manifest.version}`, `${name} → ${dep}`);
      }
      assert.match(await readFile(join(dir, 'LICENSE'), 'utf8'), /Apache License\s+Version 2\.0/);
    }
    // The ^0.1.0 ranges between the packages resolved to the tarballs: no second copy nested anywhere.
    const { stdout } = await run('npm', ['ls', '--all', '--parseable', '@certkit/runtime'], {
      cwd: project,
      env: userEnv(),
    });
    assert.deepEqual(stdout.trim().split('\n'), [join(project, 'node_modules', '@certkit', 'runtime')]);
  });

  it('the example controller and the README skeleton type-check against the installed declarations alone', async () => {
    // The repository's compiler and Node types; everything else (@certkit/*, kubernetes-types) from the
    // install, whose declarations must name every package they need as a dependency.
    const repoTypes = join(here, '../../../node_modules/@types');
    await writeFile(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2024',
          module: 'nodenext',
          strict: true,
          noEmit: true,
          allowImportingTsExtensions: true,
          erasableSyntaxOnly: true,
          verbatimModuleSyntax: true,
          typeRoots: [repoTypes],
          types: ['node'],
        },
        files: ['controller.ts', 'readme-skeleton.ts'],
      }),
    );
    const tsc = join(
      dirname(fileURLToPath(import.meta.resolve('@typescript/native/package.json'))),
      'bin/tsc',
    );
    const result = await run(process.execPath, [tsc, '-p', project], { env: userEnv() }).catch(
      (err: { stdout: string }) => err,
    );
    assert.equal(result.stdout, '', 'tsc reported errors');
    assert.match(await readFile(join(project, 'readme-skeleton.ts'), 'utf8'), /new Manager\(/);
  });

  for (const major of NODE_LINES) {
    it(`on Node ${major}: require() and npx certkit work, and the example controller copies ConfigMaps`, async () => {
      const node = nodes.get(major)!;
      const env = userEnv({ PATH: `${dirname(node)}:${process.env.PATH}` });
      const { stdout: version } = await run(node, ['--version'], { env });
      assert.equal(majorOf(version), major);

      // ES modules, loadable from CommonJS too (require(esm), unflagged since 22.12).
      const required = await run(
        node,
        [
          '-e',
          "console.log(typeof require('@certkit/runtime').Manager, typeof require('@certkit/apimachinery').isNotFound)",
        ],
        { cwd: project, env },
      );
      assert.equal(required.stdout, 'function function\n');

      const help = await run('npx', ['--no', 'certkit', 'help'], { cwd: project, env });
      assert.match(help.stdout, /^usage: certkit <command>/);

      await copyConfigMapsOn(node, env, `line-${major}`);
    });
  }

  it(`on Node ${NODE_LINES[0]}: the installed certkit up serves the API (node:sqlite and all)`, async () => {
    const node = nodes.get(NODE_LINES[0])!;
    const dir = await mkdtemp(join(tmpdir(), 'certkit-installed-up-'));
    const bin = join(project, 'node_modules', '@certkit', 'cli', 'bin', 'certkit.js');
    const child = spawn(node, [bin, 'up', '--data-dir', dir, '--port', '0'], {
      cwd: project,
      env: userEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const url = await eventually(
        () => /listening on (https:\/\/\S+)/.exec(output)?.[1],
        'certkit up',
        30_000,
        50,
        () => output,
      );
      const crds = await callApi(dir, url, 'GET', '/apis/cert-manager.io/v1');
      assert.equal(crds.status, 200, JSON.stringify(crds.json));
      // deploy/rbac.yaml, shipped in the compiled @certkit/certificates, applied for the controller's identity.
      const binding = await callApi(
        dir,
        url,
        'GET',
        '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/certkit-controller',
      );
      assert.equal(binding.status, 200, JSON.stringify(binding.json));
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, output);
    await rm(dir, { recursive: true, force: true });
  });

  it(`on Node ${TOO_OLD}: certkit refuses in one line, naming the Node it needs`, async () => {
    const node = nodes.get(TOO_OLD)!;
    const env = userEnv({ PATH: `${dirname(node)}:${process.env.PATH}` });
    const result = await run('npx', ['--no', 'certkit', 'help'], { cwd: project, env }).then(
      () => assert.fail('certkit ran on an unsupported Node'),
      (err: { code: number; stderr: string }) => err,
    );
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr,
      `certkit: needs Node.js 22.13 or later; this is ${(await run(node, ['--version'])).stdout}`,
    );
  });

  /**
   * Runs the installed example controller with `node` for a source namespace of its own, and checks what it
   * promises: copies into every namespace, one created later included; an edited source copied again; a
   * deleted copy put back; the source deleted, its copies deleted; SIGTERM, a clean exit.
   */
  async function copyConfigMapsOn(node: string, env: NodeJS.ProcessEnv, prefix: string): Promise<void> {
    const api = (method: string, path: string, body?: unknown) =>
      callApi(dataDir, server.url, method, path, body);
    const source = `${prefix}-src`;
    const target = `${prefix}-dst`;
    const later = `${prefix}-later`;
    const name = `${prefix}-settings`;
    const copyIn = async (ns: string) => {
      const res = await api('GET', `/api/v1/namespaces/${ns}/configmaps/${name}`);
      return res.status === 200 ? res.json : undefined;
    };
    for (const ns of [source, target]) {
      assert.equal((await api('POST', '/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
    }
    const created = await api('POST', `/api/v1/namespaces/${source}/configmaps`, {
      metadata: { name, labels: { [COPY_LABEL]: 'true' } },
      data: { greeting: 'hello' },
    });
    assert.equal(created.status, 201);

    const controller = startController(node, env, source);
    try {
      const copy = await eventually(
        () => copyIn(target),
        `the copy in ${target}`,
        20_000,
        50,
        controller.output,
      );
      assert.deepEqual(copy.data, { greeting: 'hello' });
      assert.equal((copy.metadata as { labels: Record<string, string> }).labels[COPY_LABEL], 'copied');
      assert.ok(await copyIn('default'), 'copied into the namespaces that were there before');

      assert.equal((await api('POST', '/api/v1/namespaces', { metadata: { name: later } })).status, 201);
      await eventually(
        () => copyIn(later),
        `the copy in the new namespace ${later}`,
        10_000,
        50,
        controller.output,
      );

      const updated = await api('PUT', `/api/v1/namespaces/${source}/configmaps/${name}`, {
        ...created.json,
        data: { greeting: 'bonjour' },
      });
      assert.equal(updated.status, 200);
      await eventually(
        async () =>
          ((await copyIn(target))?.data as Record<string, string> | undefined)?.greeting === 'bonjour',
        'the edited source copied again',
        10_000,
        50,
        controller.output,
      );

      assert.equal((await api('DELETE', `/api/v1/namespaces/${target}/configmaps/${name}`)).status, 200);
      await eventually(() => copyIn(target), 'the deleted copy put back', 10_000, 50, controller.output);

      assert.equal((await api('DELETE', `/api/v1/namespaces/${source}/configmaps/${name}`)).status, 200);
      for (const ns of [target, later, 'default']) {
        await eventually(
          async () => !(await copyIn(ns)),
          `the copy in ${ns} deleted`,
          10_000,
          50,
          controller.output,
        );
      }
    } finally {
      controller.child.kill('SIGTERM');
    }
    assert.equal(await controller.exited, 0, controller.output());
    assert.match(controller.output(), /"msg":"stopped"/);
    assert.doesNotMatch(controller.output(), /"level":"error"/);
  }

  function startController(node: string, env: NodeJS.ProcessEnv, sourceNamespace: string) {
    const args = ['controller.ts', '--source-namespace', sourceNamespace, '--metrics-bind-address', '0'];
    const child: ChildProcess = spawn(node, args, {
      cwd: project,
      env: { ...env, KUBECONFIG: join(dataDir, 'kubeconfig') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, exited, output: () => output };
  }
});
