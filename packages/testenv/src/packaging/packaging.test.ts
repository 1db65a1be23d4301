import assert from 'node:assert/strict';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { majorOf, nodeLinesCache } from './node-lines.ts';
import { userEnv } from './npm.ts';

describe('userEnv', () => {
  it('drops npm script variables and NODE_OPTIONS, keeps the npm cache, user config and registry', () => {
    const saved = { ...process.env };
    try {
      Object.assign(process.env, {
        NODE_OPTIONS: '--conditions=source',
        npm_config_local_prefix: '/repo',
        npm_config_node_options: '--conditions=source',
        npm_lifecycle_event: 'test',
        npm_package_name: 'certkit',
        npm_config_cache: '/cache',
        npm_config_userconfig: '/home/u/.npmrc',
        npm_config_registry: 'https://registry.example/',
        KEEP_ME: 'yes',
      });
      const env = userEnv({ EXTRA: '1' });
      for (const gone of [
        'NODE_OPTIONS',
        'npm_config_local_prefix',
        'npm_config_node_options',
        'npm_lifecycle_event',
        'npm_package_name',
      ]) {
        assert.equal(env[gone], undefined, gone);
      }
      assert.equal(env.npm_config_cache, '/cache');
      assert.equal(env.npm_config_userconfig, '/home/u/.npmrc');
      assert.equal(env.npm_config_registry, 'https://registry.example/');
      assert.equal(env.KEEP_ME, 'yes');
      assert.equal(env.EXTRA, '1');
    } finally {
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
    }
  });
});

describe('node lines', () => {
  it('reads the major of a version string', () => {
    assert.equal(majorOf('v22.23.3'), 22);
    assert.equal(majorOf('26.10.0\n'), 26);
    assert.ok(Number.isNaN(majorOf('nightly')));
  });

  it('caches in CERTKIT_NODE_CACHE, else under XDG_CACHE_HOME, else ~/.cache', () => {
    assert.equal(nodeLinesCache({ CERTKIT_NODE_CACHE: '/c', XDG_CACHE_HOME: '/x' }), '/c');
    assert.equal(nodeLinesCache({ XDG_CACHE_HOME: '/x' }), join('/x', 'certkit', 'node-lines'));
    assert.equal(nodeLinesCache({}), join(homedir(), '.cache', 'certkit', 'node-lines'));
  });
});
