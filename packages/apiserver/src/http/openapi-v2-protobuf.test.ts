import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { decodeOpenApiV2Protobuf } from '@certkit/testenv/openapi/openapi-v2-protobuf';
import { encodeSwaggerProtobuf } from './openapi-v2-protobuf.ts';

/**
 * The encoder's mapping of what the built-in kinds' document does not exercise (a CRD's schema may): read back
 * with protobufjs, an independent decoder, with gnostic's field numbers.
 */

function definition(schema: Record<string, unknown>): Record<string, any> {
  const doc = decodeOpenApiV2Protobuf(
    encodeSwaggerProtobuf({ swagger: '2.0', definitions: { 'com.example.v1.Widget': schema } }),
  );
  assert.equal(doc.definitions.additional_properties[0].name, 'com.example.v1.Widget');
  return doc.definitions.additional_properties[0].value;
}

describe('encodeSwaggerProtobuf', () => {
  it('writes numeric and string validations, negative and fractional ones included', () => {
    const s = definition({
      type: 'integer',
      minimum: -3,
      maximum: 2.5,
      exclusiveMinimum: true,
      multipleOf: 0.5,
      minLength: 1,
      maxLength: 253,
      pattern: '^[a-z]+$',
      minItems: 2,
      maxItems: 9007199254740991,
      readOnly: true,
      title: 'Size',
    });
    assert.deepEqual(
      {
        ...s,
        max_items: Number(s.max_items),
        min_items: Number(s.min_items),
        max_length: Number(s.max_length),
        min_length: Number(s.min_length),
      },
      {
        type: { value: ['integer'] },
        minimum: -3,
        maximum: 2.5,
        exclusive_minimum: true,
        multiple_of: 0.5,
        min_length: 1,
        max_length: 253,
        pattern: '^[a-z]+$',
        min_items: 2,
        max_items: 9007199254740991,
        read_only: true,
        title: 'Size',
      },
    );
  });

  it('writes default, example, enum members and vendor extensions as YAML text', () => {
    const s = definition({
      type: 'string',
      default: 'Always',
      example: { a: [1, 'two'] },
      enum: ['Always', 'Never', null],
      'x-kubernetes-int-or-string': true,
      'x-kubernetes-list-map-keys': ['name', 'protocol'],
    });
    assert.equal(parseYaml(s.default.yaml), 'Always');
    assert.deepEqual(parseYaml(s.example.yaml), { a: [1, 'two'] });
    assert.deepEqual(
      s.enum.map((e: any) => parseYaml(e.yaml)),
      ['Always', 'Never', null],
    );
    assert.deepEqual(
      s.vendor_extension.map((e: any) => [e.name, parseYaml(e.value.yaml)]),
      [
        ['x-kubernetes-int-or-string', true],
        ['x-kubernetes-list-map-keys', ['name', 'protocol']],
      ],
    );
  });

  it('writes additionalProperties as a schema or a boolean, items as one schema or a tuple, and allOf', () => {
    assert.deepEqual(definition({ additionalProperties: false }).additional_properties, { boolean: false });
    assert.deepEqual(definition({ additionalProperties: true }).additional_properties, { boolean: true });
    assert.deepEqual(definition({ additionalProperties: { type: 'string' } }).additional_properties, {
      schema: { type: { value: ['string'] } },
    });
    assert.deepEqual(
      definition({ type: ['string', 'null'], items: [{ type: 'string' }, { type: 'integer' }] }),
      {
        type: { value: ['string', 'null'] },
        items: { schema: [{ type: { value: ['string'] } }, { type: { value: ['integer'] } }] },
      },
    );
    assert.deepEqual(definition({ allOf: [{ $ref: '#/definitions/a' }, { required: ['b'] }] }), {
      all_of: [{ _ref: '#/definitions/a' }, { required: ['b'] }],
    });
  });

  it('leaves out OpenAPI v3 keywords that Swagger 2.0 has no field for', () => {
    assert.deepEqual(
      definition({
        type: 'object',
        nullable: true,
        oneOf: [{ required: ['a'] }],
        anyOf: [{ required: ['b'] }],
        not: { required: ['c'] },
        properties: { a: { type: 'string', nullable: true } },
      }),
      {
        type: { value: ['object'] },
        properties: { additional_properties: [{ name: 'a', value: { type: { value: ['string'] } } }] },
      },
    );
  });

  it('writes body and path parameters in their own messages', () => {
    const doc = decodeOpenApiV2Protobuf(
      encodeSwaggerProtobuf({
        swagger: '2.0',
        paths: {
          '/apis/example.com/v1/widgets/{name}': {
            put: {
              parameters: [
                { name: 'name', in: 'path', required: true, type: 'string', uniqueItems: true },
                { name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/w' } },
                { name: 'X-Unknown', in: 'cookie', type: 'string' },
              ],
            },
          },
        },
      }),
    );
    const put = doc.paths.path[0].value.put;
    assert.deepEqual(
      put.parameters.map((p: any) => p.parameter),
      [
        {
          non_body_parameter: {
            path_parameter_sub_schema: {
              name: 'name',
              in: 'path',
              required: true,
              type: 'string',
              unique_items: true,
            },
          },
        },
        { body_parameter: { name: 'body', in: 'body', required: true, schema: { _ref: '#/definitions/w' } } },
      ],
    );
  });
});
