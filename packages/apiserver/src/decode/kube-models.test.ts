import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { goStructName, goTypeName, loadModel, type ModelType, modelDocs } from './kube-models.ts';

describe('kube-models', () => {
  it('a model asked for while another load has queued it comes back whole', async () => {
    // The Secret's load queues ObjectMeta; asking for ObjectMeta at any moment meanwhile must not see it
    // half-loaded.
    let secretLoaded = false;
    const secret = loadModel('V1Secret').then((m) => {
      secretLoaded = true;
      return m;
    });
    const asked: Promise<ModelType>[] = [];
    while (!secretLoaded) {
      asked.push(loadModel('V1ObjectMeta'));
      await new Promise((r) => setImmediate(r));
    }
    assert.ok(asked.length > 0, 'asked while the Secret was loading');
    for (const objectMeta of await Promise.all(asked)) {
      assert.ok(objectMeta.fields.has('name') && objectMeta.fields.has('ownerReferences'));
      const owner = objectMeta.fields.get('ownerReferences');
      assert.ok(owner?.kind === 'array' && owner.items.kind === 'model' && owner.items.fields.has('uid'));
    }
    assert.equal((await secret).fields.get('metadata'), await loadModel('V1ObjectMeta'));
  });

  it('reads field types and formats as the generated models give them', async () => {
    const secret = await loadModel('V1Secret');
    assert.equal(goTypeName(secret.fields.get('data')!), 'map[string][]uint8');
    assert.equal(goTypeName(secret.fields.get('stringData')!), 'map[string]string');
    const lease = await loadModel('V1LeaseSpec');
    assert.equal(goTypeName(lease.fields.get('leaseDurationSeconds')!), 'int32');
    assert.equal(goTypeName(lease.fields.get('renewTime')!), 'v1.MicroTime');
    assert.equal(goStructName(await loadModel('CoreV1Event')), 'Event');
  });

  it('a model that does not exist fails its load, and later loads still work', async () => {
    await assert.rejects(loadModel('V1NoSuchThing'));
    assert.ok((await loadModel('V1ConfigMap')).fields.has('binaryData'));
  });

  it('reads descriptions and required fields from the declaration files', async () => {
    const docs = await modelDocs('V1OwnerReference');
    assert.match(docs.description, /^OwnerReference contains enough information/);
    assert.equal(docs.fields.get('uid')?.required, true);
    assert.equal(docs.fields.get('controller')?.required, false);
    assert.match(
      docs.fields.get('controller')!.description,
      /^If true, this reference points to the managing controller\./,
    );
  });
});
