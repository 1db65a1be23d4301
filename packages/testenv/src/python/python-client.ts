import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * The official Python client (`python3-kubernetes` from Debian) in tests: whether it is there (or the reason
 * to skip), and a runner for small scripts against a server's kubeconfig.
 *
 * The interpreter is /usr/bin/python3 by path: the Debian package installs the module for the system
 * Python, and a pyenv or virtualenv `python3` earlier on PATH would not see it.
 */

const execFileAsync = promisify(execFile);

export const PYTHON = '/usr/bin/python3';

function findSkipReason(): string | false {
  const probe = spawnSync(PYTHON, ['-c', 'import kubernetes; print(kubernetes.__version__)'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (probe.error) return `${PYTHON} cannot be run (${(probe.error as NodeJS.ErrnoException).code})`;
  if (probe.status !== 0) {
    return `${PYTHON} has no "kubernetes" module (install python3-kubernetes): ${probe.stderr.trim().split('\n').at(-1)}`;
  }
  return false;
}

/** Why the Python client suites skip, or false when the client is there. */
export const pythonClientSkip: string | false = findSkipReason();

/**
 * What every script starts with: the client configured from $KUBECONFIG, the script's arguments as `ARGS`
 * (one JSON value), `emit()` to hand a JSON result back, and `to_dict()` for the client's model objects
 * (camelCase, as on the wire).
 */
const PRELUDE = `
import json, os, sys, time, threading
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException
config.load_kube_config(config_file=os.environ['KUBECONFIG'])
ARGS = json.loads(sys.argv[1])
core = client.CoreV1Api()
_serializer = client.ApiClient()
def to_dict(obj):
    return _serializer.sanitize_for_serialization(obj)
def api_client_sending(content_type):
    """An ApiClient whose requests carry this Content-Type (how 22.x clients send merge and apply patches)."""
    api = client.ApiClient()
    api.set_default_header('Content-Type', content_type)
    return api
def api_error(call):
    """Runs call, which must fail with an ApiException; returns its status code and parsed Status body."""
    try:
        call()
    except ApiException as e:
        return {'status': e.status, 'body': json.loads(e.body)}
    raise AssertionError('expected an ApiException')
def emit(value):
    print(json.dumps(value))
`;

export interface PythonClient {
  /**
   * Runs a script (indented as at the top level) after the prelude with `args` as ARGS; asserts that it
   * exits 0 and returns what it passed to emit() (its last line of output), parsed.
   */
  run(script: string, args?: unknown): Promise<any>;
}

export function pythonClientFor(kubeconfigPath: string): PythonClient {
  return {
    async run(script, args = null) {
      const code = `${PRELUDE}\n${script}`;
      let stdout: string;
      try {
        ({ stdout } = await execFileAsync(PYTHON, ['-c', code, JSON.stringify(args)], {
          env: { ...process.env, KUBECONFIG: kubeconfigPath, PYTHONDONTWRITEBYTECODE: '1' },
          timeout: 60_000,
        }));
      } catch (err) {
        const e = err as { code?: number | string; stdout?: string; stderr?: string };
        assert.fail(`python exited ${e.code}:\n${e.stderr ?? ''}\n${e.stdout ?? ''}`);
      }
      const lines = stdout.trim().split('\n');
      return JSON.parse(lines.at(-1) ?? 'null');
    },
  };
}
