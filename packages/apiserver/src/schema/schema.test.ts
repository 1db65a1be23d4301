import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatFieldError } from '@certkit/apimachinery';
import { admitCustomResource as admitCopy, admitCustomResourceInPlace } from './admit.ts';
import { type JSONSchemaProps } from './types.ts';
import { unknownCustomResourceFields } from './prune.ts';
import { validateStructuralSchema } from './structural.ts';

/**
 * admitCustomResource, checked against the registry's fast paths on every case below: the in-place admission
 * must give the same object and errors, and the read-only walk the same unknown fields, in the same order.
 */
function admitCustomResource(
  schema: JSONSchemaProps,
  object: Record<string, unknown>,
): ReturnType<typeof admitCopy> {
  const result = admitCopy(schema, object);
  assert.deepEqual(unknownCustomResourceFields(schema, object), result.pruned);
  const inPlace = structuredClone(object);
  const errors = admitCustomResourceInPlace(schema, inPlace);
  assert.deepEqual(inPlace, result.object);
  assert.deepEqual(Object.keys(inPlace), Object.keys(result.object));
  assert.deepEqual(errors, result.errors);
  return result;
}

const META = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' } };

/** A root schema with `spec` described by `spec`, as a CRD version would carry it. */
function rootWith(spec: JSONSchemaProps, extra: Record<string, JSONSchemaProps> = {}): JSONSchemaProps {
  return { type: 'object', properties: { spec, ...extra } };
}

/** Admits `{...META, spec}` and answers the admitted spec and the rendered field errors. */
function admitSpec(spec: JSONSchemaProps, value: unknown): { spec: unknown; messages: string[] } {
  const { object, errors } = admitCustomResource(rootWith(spec), { ...META, spec: value });
  return { spec: object.spec, messages: errors.map(formatFieldError) };
}

function messagesFor(spec: JSONSchemaProps, value: unknown): string[] {
  return admitSpec(spec, value).messages;
}

/** A spec schema with a single property `field`. */
function one(field: string, schema: JSONSchemaProps): JSONSchemaProps {
  return { type: 'object', properties: { [field]: schema } };
}

describe('admitCustomResource: pruning', () => {
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          known: { type: 'string' },
          nested: {
            type: 'object',
            properties: { deeper: { type: 'object', properties: { keep: { type: 'integer' } } } },
          },
          list: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
          labels: {
            type: 'object',
            additionalProperties: { type: 'object', properties: { v: { type: 'string' } } },
          },
        },
      },
      status: { type: 'object', properties: { phase: { type: 'string' } } },
    },
  };

  it('removes unknown fields at every depth, in list items and in map values', () => {
    const input = {
      ...META,
      unknownTop: 1,
      spec: {
        known: 'k',
        unknown: 'x',
        nested: { junk: true, deeper: { keep: 1, drop: 2 } },
        list: [{ name: 'a', extra: 1 }, { other: 2 }],
        labels: { a: { v: 'x', w: 'y' } },
      },
      status: { phase: 'Ready', message: 'dropped like any other unknown field' },
    };
    const { object, errors } = admitCustomResource(schema, input);
    assert.deepEqual(errors, []);
    assert.deepEqual(object, {
      ...META,
      spec: {
        known: 'k',
        nested: { deeper: { keep: 1 } },
        list: [{ name: 'a' }, {}],
        labels: { a: { v: 'x' } },
      },
      status: { phase: 'Ready' },
    });
  });

  it('keeps the root apiVersion, kind and metadata untouched, whatever the schema says', () => {
    const metadata = { name: 'w', labels: { a: 'b' }, annotations: { x: 'y' }, weird: { deep: 1 } };
    const { object, errors } = admitCustomResource({ type: 'object', properties: {} }, { ...META, metadata });
    assert.deepEqual(errors, []);
    assert.deepEqual(object, { ...META, metadata });
  });

  it('does not modify its input', () => {
    const input = Object.freeze({ ...META, spec: Object.freeze({ known: 'k', unknown: 'x' }) });
    const { object } = admitCustomResource(schema, input);
    assert.deepEqual(input.spec, { known: 'k', unknown: 'x' });
    assert.deepEqual(object.spec, { known: 'k' });
  });

  it('keeps unknown fields under x-kubernetes-preserve-unknown-fields but still prunes known ones below', () => {
    const spec: JSONSchemaProps = {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
      properties: { typed: { type: 'object', properties: { a: { type: 'string' } } } },
    };
    const { spec: admitted } = admitSpec(spec, { free: { any: ['thing'] }, typed: { a: 'x', b: 'pruned' } });
    assert.deepEqual(admitted, { free: { any: ['thing'] }, typed: { a: 'x' } });
  });

  it('reports the paths it prunes, in order, through lists, maps and preserving nodes', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            list: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
            free: {
              type: 'array',
              'x-kubernetes-preserve-unknown-fields': true,
              items: { type: 'object', properties: { typed: { type: 'object', properties: {} } } },
            },
            anyValues: { type: 'object', additionalProperties: true },
            typedValues: { type: 'object', additionalProperties: { type: 'object', properties: {} } },
            untypedList: { type: 'array' },
          },
        },
      },
    };
    const { pruned } = admitCustomResource(schema, {
      ...META,
      top: 1,
      spec: {
        list: [{ name: 'a', x: 1 }, { y: 2 }],
        free: [{ kept: 1, typed: { gone: 1 } }],
        anyValues: { a: { b: 1 }, c: 2 },
        typedValues: { k: { z: 1 } },
        untypedList: [{ q: 1 }],
        other: true,
      },
    });
    assert.deepEqual(pruned, [
      'top',
      'spec.list[0].x',
      'spec.list[1].y',
      'spec.free[0].typed.gone',
      'spec.anyValues.a.b',
      'spec.typedValues.k.z',
      'spec.untypedList[0].q',
      'spec.other',
    ]);
  });

  it('keeps everything under a preserving root', () => {
    const { object } = admitCustomResource(
      { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      { ...META, spec: { anything: [1, { two: 2 }] }, extra: true },
    );
    assert.deepEqual(object, { ...META, spec: { anything: [1, { two: 2 }] }, extra: true });
  });

  it('keeps apiVersion, kind and metadata of an embedded resource and prunes the rest of it', () => {
    const spec = one('template', {
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      properties: { spec: { type: 'object', properties: { replicas: { type: 'integer' } } } },
    });
    const template = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', labels: { a: 'b' } },
      spec: { replicas: 1, paused: true },
      status: {},
    };
    const { spec: admitted, messages } = admitSpec(spec, { template });
    assert.deepEqual(messages, []);
    assert.deepEqual(admitted, {
      template: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd', labels: { a: 'b' } },
        spec: { replicas: 1 },
      },
    });
  });

  it('requires an embedded resource to name its apiVersion and kind', () => {
    const spec = one('template', {
      type: 'object',
      'x-kubernetes-embedded-resource': true,
      'x-kubernetes-preserve-unknown-fields': true,
    });
    assert.deepEqual(messagesFor(spec, { template: { metadata: {} } }), [
      'spec.template.apiVersion: Required value',
      'spec.template.kind: Required value',
    ]);
    assert.deepEqual(messagesFor(spec, { template: { apiVersion: '', kind: 5 } }), [
      'spec.template.apiVersion: Invalid value: "": must not be empty',
      'spec.template.kind: Invalid value: 5: must be a string',
    ]);
  });

  it('keeps keys of a boolean additionalProperties but, having no schema for them, empties object values', () => {
    const { spec: admitted } = admitSpec(one('bag', { type: 'object', additionalProperties: true }), {
      bag: { n: 1, s: 'x', o: { dropped: true } },
    });
    assert.deepEqual(admitted, { bag: { n: 1, s: 'x', o: {} } });
  });

  it('drops nulls the schema cannot hold, keeps nullable ones', () => {
    const spec: JSONSchemaProps = {
      type: 'object',
      properties: {
        plain: { type: 'string' },
        maybe: { type: 'string', nullable: true },
        list: { type: 'array', items: { type: 'string', nullable: true } },
      },
    };
    const { spec: admitted, messages } = admitSpec(spec, { plain: null, maybe: null, list: ['a', null] });
    assert.deepEqual(messages, []);
    assert.deepEqual(admitted, { maybe: null, list: ['a', null] });
  });
});

describe('admitCustomResource: defaulting', () => {
  it('defaults missing fields only', () => {
    const spec: JSONSchemaProps = {
      type: 'object',
      properties: { replicas: { type: 'integer', default: 1 }, mode: { type: 'string', default: 'auto' } },
    };
    assert.deepEqual(admitSpec(spec, {}).spec, { replicas: 1, mode: 'auto' });
    assert.deepEqual(admitSpec(spec, { replicas: 3 }).spec, { replicas: 3, mode: 'auto' });
    assert.deepEqual(admitSpec(spec, { replicas: 0, mode: '' }).spec, { replicas: 0, mode: '' });
  });

  it('defaults inside a defaulted object, and prunes the default like data', () => {
    const spec = one('config', {
      type: 'object',
      default: { level: 'info', junk: 'pruned' },
      properties: { level: { type: 'string' }, format: { type: 'string', default: 'json' } },
    });
    assert.deepEqual(admitSpec(spec, {}).spec, { config: { level: 'info', format: 'json' } });
  });

  it('does not create a missing parent that has no default', () => {
    const spec = one('config', {
      type: 'object',
      properties: { format: { type: 'string', default: 'json' } },
    });
    assert.deepEqual(admitSpec(spec, {}).spec, {});
    assert.deepEqual(admitSpec(spec, { config: {} }).spec, { config: { format: 'json' } });
  });

  it('defaults inside list items and map values, including null items', () => {
    const spec: JSONSchemaProps = {
      type: 'object',
      properties: {
        ports: {
          type: 'array',
          items: {
            type: 'object',
            default: { port: 443 },
            properties: { port: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' } },
          },
        },
        limits: {
          type: 'object',
          additionalProperties: { type: 'object', properties: { max: { type: 'integer', default: 10 } } },
        },
      },
    };
    const { spec: admitted, messages } = admitSpec(spec, {
      ports: [{ port: 80 }, null],
      limits: { a: {}, b: { max: 3 } },
    });
    assert.deepEqual(messages, []);
    assert.deepEqual(admitted, {
      ports: [
        { port: 80, protocol: 'TCP' },
        { port: 443, protocol: 'TCP' },
      ],
      limits: { a: { max: 10 }, b: { max: 3 } },
    });
  });

  it('replaces a non-nullable null with the default, and leaves a nullable null alone', () => {
    const spec: JSONSchemaProps = {
      type: 'object',
      properties: {
        strict: { type: 'string', default: 'd' },
        loose: { type: 'string', nullable: true, default: 'd' },
      },
    };
    assert.deepEqual(admitSpec(spec, { strict: null, loose: null }).spec, { strict: 'd', loose: null });
  });

  it('defaults status like any other property, and never the root meta fields', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        metadata: { type: 'object', default: { name: 'never' } },
        status: {
          type: 'object',
          default: {},
          properties: { phase: { type: 'string', default: 'Pending' } },
        },
      },
    };
    const { object } = admitCustomResource(schema, { apiVersion: 'example.com/v1', kind: 'Widget' });
    assert.deepEqual(object, { apiVersion: 'example.com/v1', kind: 'Widget', status: { phase: 'Pending' } });
  });
});

describe('admitCustomResource: validation messages', () => {
  const cases: { name: string; spec: JSONSchemaProps; value: unknown; messages: string[] }[] = [
    {
      name: 'type integer',
      spec: one('replicas', { type: 'integer' }),
      value: { replicas: 'three' },
      messages: [
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
      ],
    },
    {
      name: 'type integer given a fraction (kube-openapi also reports the int64 range check)',
      spec: one('replicas', { type: 'integer' }),
      value: { replicas: 1.5 },
      messages: [
        'spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number"',
        '<nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.replicas',
      ],
    },
    {
      name: 'type string, boolean, object, array',
      spec: {
        type: 'object',
        properties: {
          s: { type: 'string' },
          b: { type: 'boolean' },
          o: { type: 'object' },
          a: { type: 'array', items: { type: 'string' } },
        },
      },
      value: { s: 5, b: 'true', o: [], a: {} },
      messages: [
        'spec.s: Invalid value: "integer": spec.s in body must be of type string: "integer"',
        'spec.b: Invalid value: "string": spec.b in body must be of type boolean: "string"',
        'spec.o: Invalid value: "array": spec.o in body must be of type object: "array"',
        'spec.a: Invalid value: "object": spec.a in body must be of type array: "object"',
      ],
    },
    {
      name: 'type number accepts integers',
      spec: one('ratio', { type: 'number' }),
      value: { ratio: 2 },
      messages: [],
    },
    {
      name: 'null in a list of non-nullable items',
      spec: one('items', { type: 'array', items: { type: 'string' } }),
      value: { items: ['a', null] },
      messages: [
        'spec.items[1]: Invalid value: "null": spec.items[1] in body must be of type string: "null"',
      ],
    },
    {
      name: 'required',
      spec: {
        type: 'object',
        required: ['name', 'mode'],
        properties: { name: { type: 'string' }, mode: { type: 'string' } },
      },
      value: { mode: 'a' },
      messages: ['spec.name: Required value'],
    },
    {
      name: 'enum',
      spec: one('mode', { type: 'string', enum: ['a', 'b'] }),
      value: { mode: 'x' },
      messages: ['spec.mode: Unsupported value: "x": supported values: "a", "b"'],
    },
    {
      name: 'enum of numbers',
      spec: one('level', { type: 'integer', enum: [1, 2] }),
      value: { level: 3 },
      messages: ['spec.level: Unsupported value: 3: supported values: "1", "2"'],
    },
    {
      name: 'maximum',
      spec: one('count', { type: 'integer', maximum: 100 }),
      value: { count: 200 },
      messages: ['spec.count: Invalid value: 200: spec.count in body should be less than or equal to 100'],
    },
    {
      name: 'exclusiveMaximum',
      spec: one('count', { type: 'integer', maximum: 100, exclusiveMaximum: true }),
      value: { count: 100 },
      messages: ['spec.count: Invalid value: 100: spec.count in body should be less than 100'],
    },
    {
      name: 'minimum',
      spec: one('count', { type: 'integer', minimum: 0 }),
      value: { count: -1 },
      messages: ['spec.count: Invalid value: -1: spec.count in body should be greater than or equal to 0'],
    },
    {
      name: 'exclusiveMinimum',
      spec: one('count', { type: 'integer', minimum: 0, exclusiveMinimum: true }),
      value: { count: 0 },
      messages: ['spec.count: Invalid value: 0: spec.count in body should be greater than 0'],
    },
    {
      name: 'float bounds print as Go prints floats',
      spec: {
        type: 'object',
        properties: { r: { type: 'number', maximum: 1.5 }, big: { type: 'number', maximum: 1000000 } },
      },
      value: { r: 2.5, big: 1000000.5 },
      messages: [
        'spec.r: Invalid value: 2.5: spec.r in body should be less than or equal to 1.5',
        'spec.big: Invalid value: 1000000.5: spec.big in body should be less than or equal to 1e+06',
      ],
    },
    {
      name: 'multipleOf',
      spec: {
        type: 'object',
        properties: { n: { type: 'integer', multipleOf: 5 }, f: { type: 'number', multipleOf: 0.5 } },
      },
      value: { n: 7, f: 0.75 },
      messages: [
        'spec.n: Invalid value: 7: spec.n in body should be a multiple of 5',
        'spec.f: Invalid value: 0.75: spec.f in body should be a multiple of 0.5',
      ],
    },
    {
      name: 'multipleOf with a fractional factor accepts integers',
      spec: one('f', { type: 'number', multipleOf: 0.5 }),
      value: { f: 2 },
      messages: [],
    },
    {
      name: 'int32 range',
      spec: one('small', { type: 'integer', format: 'int32' }),
      value: { small: 2147483648 },
      messages: [
        '<nil>: Invalid value: "": Checked value must be of type integer with format int32 in spec.small',
      ],
    },
    {
      name: 'maxLength (value omitted, as field.TooLong)',
      spec: one('name', { type: 'string', maxLength: 10 }),
      value: { name: 'much-too-long-a-name' },
      messages: ['spec.name: Too long: may not be more than 10 bytes'],
    },
    {
      name: 'maxLength counts code points',
      spec: {
        type: 'object',
        properties: { ok: { type: 'string', maxLength: 3 }, bad: { type: 'string', maxLength: 3 } },
      },
      value: { ok: '😀é😀', bad: '😀😀😀😀' },
      messages: ['spec.bad: Too long: may not be more than 3 bytes'],
    },
    {
      name: 'minLength',
      spec: one('name', { type: 'string', minLength: 3 }),
      value: { name: 'ab' },
      messages: ['spec.name: Invalid value: "ab": spec.name in body should be at least 3 chars long'],
    },
    {
      name: 'pattern',
      spec: one('name', { type: 'string', pattern: '^[a-z]+$' }),
      value: { name: 'ABC' },
      messages: ['spec.name: Invalid value: "ABC": spec.name in body should match \'^[a-z]+$\''],
    },
    {
      name: 'only the first failing string check is reported',
      spec: one('name', { type: 'string', maxLength: 2, pattern: '^[a-z]+$' }),
      value: { name: 'ABC' },
      messages: ['spec.name: Too long: may not be more than 2 bytes'],
    },
    {
      name: 'maxItems',
      spec: {
        type: 'object',
        properties: { items: { type: 'array', maxItems: 3, items: { type: 'integer' } } },
      },
      value: { items: [1, 2, 3, 4, 5] },
      messages: ['spec.items: Too many: 5: must have at most 3 items'],
    },
    {
      name: 'maxItems of one',
      spec: one('items', { type: 'array', maxItems: 1, items: { type: 'integer' } }),
      value: { items: [1, 2] },
      messages: ['spec.items: Too many: 2: must have at most 1 item'],
    },
    {
      name: 'minItems',
      spec: one('items', { type: 'array', minItems: 2, items: { type: 'integer' } }),
      value: { items: [1] },
      messages: ['spec.items: Invalid value: 1: spec.items in body should have at least 2 items'],
    },
    {
      name: 'uniqueItems',
      spec: one('items', { type: 'array', uniqueItems: true, items: { type: 'object' } }),
      value: {
        items: [
          { a: 1, b: 2 },
          { b: 2, a: 1 },
        ],
      },
      messages: [`spec.items: Invalid value: "": spec.items in body shouldn't contain duplicates`],
    },
    {
      name: 'minProperties and maxProperties',
      spec: {
        type: 'object',
        properties: {
          few: { type: 'object', minProperties: 1, additionalProperties: { type: 'string' } },
          many: { type: 'object', maxProperties: 2, additionalProperties: { type: 'string' } },
        },
      },
      value: { few: {}, many: { a: 'a', b: 'b', c: 'c' } },
      messages: [
        'spec.few: Invalid value: 0: spec.few in body should have at least 1 properties',
        'spec.many: Too many: 3: must have at most 2 items',
      ],
    },
    {
      name: 'list items are addressed by index',
      spec: one('items', {
        type: 'array',
        items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
      }),
      value: { items: [{ name: 1 }, {}] },
      messages: [
        'spec.items[0].name: Invalid value: "integer": spec.items[0].name in body must be of type string: "integer"',
        'spec.items[1].name: Required value',
      ],
    },
    {
      name: 'map values are addressed with a dot, as kube-openapi does',
      spec: one('labels', { type: 'object', additionalProperties: { type: 'string' } }),
      value: { labels: { ok: 'x', key: 1 } },
      messages: [
        'spec.labels.key: Invalid value: "integer": spec.labels.key in body must be of type string: "integer"',
      ],
    },
    {
      name: 'int-or-string',
      spec: {
        type: 'object',
        properties: {
          a: { 'x-kubernetes-int-or-string': true },
          b: { 'x-kubernetes-int-or-string': true },
          c: { 'x-kubernetes-int-or-string': true },
          d: { 'x-kubernetes-int-or-string': true },
        },
      },
      value: { a: 80, b: 'http', c: true, d: 1.5 },
      messages: [
        'spec.c: Invalid value: "boolean": spec.c in body must be of type integer,string: "boolean"',
        'spec.d: Invalid value: "number": spec.d in body must be of type integer,string: "number"',
      ],
    },
    {
      name: 'int-or-string with its anyOf spelled out',
      spec: one('port', {
        'x-kubernetes-int-or-string': true,
        anyOf: [{ type: 'integer' }, { type: 'string' }],
        pattern: '^[a-z]+$',
      }),
      value: { port: 'HTTP' },
      messages: ['spec.port: Invalid value: "HTTP": spec.port in body should match \'^[a-z]+$\''],
    },
    {
      name: 'nullable',
      spec: one('maybe', { type: 'object', nullable: true, properties: { a: { type: 'string' } } }),
      value: { maybe: null },
      messages: [],
    },
    {
      name: 'anyOf',
      spec: one('choice', { type: 'string', anyOf: [{ pattern: '^a' }, { pattern: '^b' }] }),
      value: { choice: 'c' },
      messages: [
        '<nil>: Invalid value: "": "spec.choice" must validate at least one schema (anyOf)',
        'spec.choice: Invalid value: "c": spec.choice in body should match \'^a\'',
      ],
    },
    {
      name: 'oneOf with two matches',
      spec: one('n', { type: 'integer', oneOf: [{ minimum: 0 }, { maximum: 10 }] }),
      value: { n: 5 },
      messages: [
        '<nil>: Invalid value: "": "spec.n" must validate one and only one schema (oneOf). Found 2 valid alternatives',
      ],
    },
    {
      name: 'oneOf with none',
      spec: one('n', { type: 'integer', oneOf: [{ minimum: 10 }, { maximum: -10 }] }),
      value: { n: 5 },
      messages: [
        '<nil>: Invalid value: "": "spec.n" must validate one and only one schema (oneOf). Found none valid',
        'spec.n: Invalid value: 5: spec.n in body should be greater than or equal to 10',
      ],
    },
    {
      name: 'oneOf over required fields (a discriminated union)',
      spec: {
        type: 'object',
        properties: { a: { type: 'string' }, b: { type: 'string' } },
        oneOf: [{ required: ['a'] }, { required: ['b'] }],
      },
      value: { a: 'x' },
      messages: [],
    },
    {
      name: 'allOf',
      spec: one('n', { type: 'integer', allOf: [{ minimum: 0 }, { maximum: 10 }] }),
      value: { n: 20 },
      messages: [
        'spec.n: Invalid value: 20: spec.n in body should be less than or equal to 10',
        '<nil>: Invalid value: "": "spec.n" must validate all the schemas (allOf)',
      ],
    },
    {
      name: 'not',
      spec: one('word', { type: 'string', not: { enum: ['forbidden'] } }),
      value: { word: 'forbidden' },
      messages: ['<nil>: Invalid value: "": "spec.word" must not validate the schema (not)'],
    },
    {
      name: 'additionalProperties: false forbids every key',
      spec: one('closed', { type: 'object', additionalProperties: false }),
      value: { closed: { a: 1 } },
      messages: ['spec.closed: Invalid value: "a": spec.closed.a in body is a forbidden property'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(messagesFor(c.spec, c.value), c.messages);
    });
  }

  it('checks formats and ignores unknown ones', () => {
    const formats: [string, unknown[], unknown[]][] = [
      [
        'date-time',
        ['2024-01-02T03:04:05Z', '2024-01-02t03:04:05.123+02:00'],
        ['yesterday', '2024-01-02 03:04:05Z', '2024-01-02T25:00:00Z'],
      ],
      ['date', ['2024-02-29', '2023-12-31'], ['2023-02-29', '2024-13-01', '24-01-01']],
      [
        'byte',
        ['aGVsbG8=', 'aGk=', Buffer.alloc(100, 7).toString('base64')],
        ['not base64!', 'aGVsbG8', '', `${Buffer.alloc(100, 7).toString('base64url')}-_`],
      ],
      [
        'uuid',
        ['123e4567-e89b-12d3-a456-426614174000', '123E4567E89B12D3A456426614174000'],
        ['123e4567', 'zz3e4567-e89b-12d3-a456-426614174000'],
      ],
      ['email', ['a@example.com', 'Jane <jane@example.com>'], ['not-an-email', 'a@']],
      ['ipv4', ['10.0.0.1', '255.255.255.255'], ['256.0.0.1', '10.0.0', 'fe80::1']],
      ['ipv6', ['fe80::1', '::ffff:10.0.0.1'], ['10.0.0.1', 'fe80::1::2']],
      [
        'hostname',
        ['example.com', 'localhost', 'a-b.c-d.io'],
        ['-bad.example.com', 'a..b', 'under_score.com'],
      ],
      ['uri', ['https://example.com/x?y=1', '/absolute/path'], ['relative/path', 'http://exa mple.com']],
      ['cidr', ['10.0.0.0/8', 'fd00::/64'], ['10.0.0.0', '10.0.0.0/33']],
      ['duration', ['1h30m', '300ms', '3 days'], ['soon', '']],
      ['frobnicate', ['anything at all'], []],
    ];
    for (const [format, good, bad] of formats) {
      const spec = one('v', { type: 'string', format });
      for (const value of good) assert.deepEqual(messagesFor(spec, { v: value }), [], `${format}: ${value}`);
      for (const value of bad) {
        assert.deepEqual(
          messagesFor(spec, { v: value }),
          [
            `spec.v: Invalid value: ${JSON.stringify(value)}: spec.v in body must be of type ${format}: ${JSON.stringify(value)}`,
          ],
          `${format}: ${value}`,
        );
      }
    }
  });

  it("reads dates and date-times as kube-openapi does, on Date.UTC's calendar", () => {
    // The readings the checks were first written as: Date for the days of a month, a split on 't'.
    const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
    const TIME = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;
    const isDate = (text: string) => {
      const m = DATE.exec(text);
      if (!m) return false;
      const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
      if (month < 1 || month > 12 || day < 1) return false;
      return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
    };
    const isDateTime = (text: string) => {
      if (text.length < 4) return false;
      const parts = text.toLowerCase().split('t');
      if (parts.length < 2 || !isDate(parts[0])) return false;
      const m = TIME.exec(parts[1]);
      return m !== null && m[1] <= '23' && m[2] <= '59' && m[3] <= '59';
    };
    const dates: string[] = [];
    for (const year of [
      '0000',
      '0004',
      '0099',
      '0100',
      '1900',
      '1999',
      '2000',
      '2023',
      '2024',
      '2100',
      '9999',
    ]) {
      for (const month of ['00', '01', '02', '04', '12', '13']) {
        for (const day of ['00', '01', '28', '29', '30', '31', '32']) dates.push(`${year}-${month}-${day}`);
      }
    }
    const times = [
      'T00:00:00Z',
      't23:59:59z',
      'T24:00:00Z',
      'T12:60:00Z',
      'T12:00:60Z',
      'T01:02:03.456+02:00',
    ];
    const odd = [
      'T01:02:03x9Z',
      'T01:02:03İ1Z',
      'T01:02:03ZtX',
      'TT01:02:03Z',
      'T01:02:03',
      ' T01:02:03Z',
      'T1:2:3Z',
    ];
    const dateSpec = one('v', { type: 'string', format: 'date' });
    const dateTimeSpec = one('v', { type: 'string', format: 'date-time' });
    for (const date of dates) {
      assert.equal(messagesFor(dateSpec, { v: date }).length === 0, isDate(date), date);
      for (const time of [...times, ...odd]) {
        const value = date + time;
        assert.equal(messagesFor(dateTimeSpec, { v: value }).length === 0, isDateTime(value), value);
      }
    }
  });

  it('reports list-type set duplicates once per repeated value', () => {
    const spec = one('tags', { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } });
    assert.deepEqual(messagesFor(spec, { tags: ['a', 'b', 'a', 'a', 'b'] }), [
      'spec.tags[2]: Duplicate value: "a"',
      'spec.tags[4]: Duplicate value: "b"',
    ]);
  });

  it('reports list-type map duplicates by key', () => {
    const single = one('ports', {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } },
    });
    assert.deepEqual(messagesFor(single, { ports: [{ name: 'a' }, { name: 'b' }, { name: 'a', port: 1 }] }), [
      'spec.ports[2]: Duplicate value: {"name":"a"}',
    ]);
    const double = one('ports', {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name', 'protocol'],
      items: { type: 'object', properties: { name: { type: 'string' }, protocol: { type: 'string' } } },
    });
    const ports = [
      { name: 'a', protocol: 'TCP' },
      { name: 'a', protocol: 'UDP' },
      { protocol: 'TCP', name: 'a' },
    ];
    assert.deepEqual(messagesFor(double, { ports }), [
      'spec.ports[2]: Duplicate value: {"name":"a","protocol":"TCP"}',
    ]);
  });

  it('addresses list-type errors inside maps with [key]', () => {
    const spec = one('groups', {
      type: 'object',
      additionalProperties: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
    });
    assert.deepEqual(messagesFor(spec, { groups: { g: ['a', 'a'] } }), [
      'spec.groups[g][1]: Duplicate value: "a"',
    ]);
  });

  it('leaves the root apiVersion, kind and metadata to the registry', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      required: ['metadata', 'spec'],
      properties: { metadata: { type: 'string' }, kind: { type: 'integer' }, spec: { type: 'object' } },
    };
    const { errors } = admitCustomResource(schema, { ...META });
    assert.deepEqual(errors.map(formatFieldError), ['spec: Required value']);
  });

  it('validates status like any other property', () => {
    const schema = rootWith(
      { type: 'object' },
      { status: { type: 'object', properties: { ready: { type: 'boolean' } } } },
    );
    const { errors } = admitCustomResource(schema, { ...META, status: { ready: 'yes' } });
    assert.deepEqual(errors.map(formatFieldError), [
      'status.ready: Invalid value: "string": status.ready in body must be of type boolean: "string"',
    ]);
  });

  it('returns field errors with the cause types kube-apiserver uses', () => {
    const spec: JSONSchemaProps = {
      type: 'object',
      required: ['r'],
      properties: {
        t: { type: 'string' },
        e: { type: 'string', enum: ['a'] },
        l: { type: 'string', maxLength: 1 },
        m: { type: 'array', maxItems: 0, items: { type: 'string' } },
        s: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        r: { type: 'string' },
      },
    };
    const { errors } = admitCustomResource(rootWith(spec), {
      ...META,
      spec: { t: 1, e: 'b', l: 'long', m: ['x'], s: ['x', 'x'] },
    });
    assert.deepEqual(
      errors.map((e) => [e.field, e.type]),
      [
        ['spec.t', 'FieldValueTypeInvalid'],
        ['spec.e', 'FieldValueNotSupported'],
        ['spec.l', 'FieldValueTooLong'],
        ['spec.m', 'FieldValueTooMany'],
        ['spec.r', 'FieldValueRequired'],
        ['spec.s[1]', 'FieldValueDuplicate'],
      ],
    );
  });
});

describe('validateStructuralSchema', () => {
  const at = 'spec.versions[0].schema.openAPIV3Schema';
  const check = (schema: JSONSchemaProps) => validateStructuralSchema(schema, at).map(formatFieldError);

  it('accepts a typical structural schema', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        apiVersion: { type: 'string' },
        kind: { type: 'string' },
        metadata: { type: 'object' },
        spec: {
          type: 'object',
          required: ['replicas'],
          properties: {
            replicas: { type: 'integer', format: 'int32', minimum: 0, default: 1 },
            port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
            free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            untyped: { 'x-kubernetes-preserve-unknown-fields': true },
            labels: { type: 'object', additionalProperties: { type: 'string' } },
            ports: {
              type: 'array',
              'x-kubernetes-list-type': 'map',
              'x-kubernetes-list-map-keys': ['name'],
              items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
            },
            mode: { type: 'string', enum: ['a', 'b'], default: 'a' },
          },
          oneOf: [{ required: ['port'] }, { required: ['labels'] }],
          'x-kubernetes-validations': [{ rule: 'self.replicas >= 0' }],
        },
        status: { type: 'object', properties: { phase: { type: 'string' } } },
      },
    };
    assert.deepEqual(check(schema), []);
  });

  it('requires an object type at the root', () => {
    assert.deepEqual(check({ properties: {} }), [
      `${at}.type: Required value: must not be empty at the root`,
    ]);
    assert.deepEqual(check({ type: 'string' }), [
      `${at}.type: Invalid value: "string": must be object at the root`,
    ]);
    assert.deepEqual(check({ type: 'object', nullable: true }), [
      `${at}.nullable: Forbidden: nullable cannot be true at the root`,
    ]);
  });

  it('requires a type on every specified node outside preserve-unknown-fields and int-or-string', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            untyped: { description: 'no type' },
            list: { type: 'array', items: { properties: {} } },
            noItems: { type: 'array' },
          },
        },
      },
    };
    assert.deepEqual(check(schema), [
      `${at}.properties[spec].properties[list].items.type: Required value: must not be empty for specified array items`,
      `${at}.properties[spec].properties[noItems].items: Required value: must be specified`,
      `${at}.properties[spec].properties[untyped].type: Required value: must not be empty for specified object fields`,
    ]);
  });

  it('keeps value validations inside the structure', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { a: { type: 'string' } },
          anyOf: [{ type: 'object', properties: { ghost: { minLength: 1 } } }],
        },
      },
    };
    assert.deepEqual(check(schema), [
      `${at}.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural`,
      `${at}.properties[spec].properties[ghost]: Required value: because it is defined in ${at}.properties[spec].anyOf[0].properties[ghost]`,
    ]);
  });

  it('forbids additionalProperties at the root and next to properties, and uniqueItems', () => {
    assert.deepEqual(check({ type: 'object', additionalProperties: { type: 'string' } }), [
      `${at}.additionalProperties: Forbidden: must not be used at the root`,
    ]);
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { a: { type: 'string' } },
          additionalProperties: { type: 'string' },
        },
        list: { type: 'array', uniqueItems: true, items: { type: 'string' } },
      },
    };
    assert.deepEqual(check(schema), [
      `${at}.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
      `${at}.properties[list].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
    ]);
  });

  it('checks list and map extensions and patterns', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        noKeys: { type: 'array', 'x-kubernetes-list-type': 'map', items: { type: 'object' } },
        keysWithoutMap: { type: 'array', 'x-kubernetes-list-map-keys': ['name'], items: { type: 'object' } },
        badKey: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['missing'],
          items: { type: 'object', properties: { name: { type: 'string' } } },
        },
        badPattern: { type: 'string', pattern: '([' },
      },
    };
    const messages = check(schema);
    // The detail ends with the regular expression engine's own complaint.
    assert.ok(
      messages[0].startsWith(
        `${at}.properties[badPattern].pattern: Invalid value: "([": must be a valid regular expression, but isn't: `,
      ),
      messages[0],
    );
    assert.deepEqual(messages.slice(1), [
      `${at}.properties[noKeys].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`,
      `${at}.properties[keysWithoutMap].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty`,
      `${at}.properties[badKey].x-kubernetes-list-map-keys: Invalid value: ["missing"]: entries must all be names of item properties`,
    ]);
  });

  it('validates defaults against their schema, with upstream paths and wording', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          default: { count: 200 },
          properties: {
            replicas: { type: 'integer', default: 'one' },
            count: { type: 'integer', maximum: 100 },
            config: { type: 'object', default: { a: 1, junk: 2 }, properties: { a: { type: 'integer' } } },
          },
        },
      },
    };
    assert.deepEqual(check(schema), [
      `${at}.properties[spec].default.count: Invalid value: 200: count in body should be less than or equal to 100`,
      `${at}.properties[spec].properties[replicas].default: Invalid value: "string":  in body must be of type integer: "string"`,
      `${at}.properties[spec].properties[config].default: Invalid value: {"a":1,"junk":2}: must not have unknown fields`,
    ]);
  });

  it('checks defaults only once the schema is structural', () => {
    const schema: JSONSchemaProps = {
      type: 'object',
      properties: { spec: { properties: { a: { type: 'integer', default: 'x' } } } },
    };
    assert.deepEqual(check(schema), [
      `${at}.properties[spec].type: Required value: must not be empty for specified object fields`,
    ]);
  });
});
