import protobuf from 'protobufjs';

/**
 * Reads /openapi/v2's protobuf back with protobufjs, an implementation independent of the server's encoder,
 * so tests check the bytes against gnostic's `openapi.v2.Document` numbering rather than against themselves.
 * Only the messages the server's document uses are declared (field numbers from gnostic's
 * openapiv2/OpenAPIv2.proto); fields not declared are skipped, as any protobuf reader does.
 */
const SCHEMA = `
syntax = "proto3";
package openapi.v2;
message Any { string yaml = 2; }
message NamedAny { string name = 1; Any value = 2; }
message Info { string title = 1; string version = 2; }
message Document {
  string swagger = 1; Info info = 2; Paths paths = 8; Definitions definitions = 9;
}
message Paths { repeated NamedAny vendor_extension = 1; repeated NamedPathItem path = 2; }
message NamedPathItem { string name = 1; PathItem value = 2; }
message PathItem {
  Operation get = 2; Operation put = 3; Operation post = 4; Operation delete = 5; Operation patch = 8;
}
message Operation {
  string operation_id = 5; repeated ParametersItem parameters = 8; Responses responses = 9;
  repeated NamedAny vendor_extension = 13;
}
message ParametersItem { Parameter parameter = 1; }
message Parameter { BodyParameter body_parameter = 1; NonBodyParameter non_body_parameter = 2; }
message BodyParameter { string description = 1; string name = 2; string in = 3; bool required = 4; Schema schema = 5; }
message NonBodyParameter {
  QueryParameterSubSchema query_parameter_sub_schema = 3; PathParameterSubSchema path_parameter_sub_schema = 4;
}
message PathParameterSubSchema {
  bool required = 1; string in = 2; string description = 3; string name = 4; string type = 5; bool unique_items = 19;
}
message QueryParameterSubSchema {
  string in = 2; string description = 3; string name = 4; string type = 6; bool unique_items = 20;
}
message Responses { repeated NamedResponseValue response_code = 1; }
message NamedResponseValue { string name = 1; ResponseValue value = 2; }
message ResponseValue { Response response = 1; }
message Response { string description = 1; }
message Definitions { repeated NamedSchema additional_properties = 1; }
message NamedSchema { string name = 1; Schema value = 2; }
message Schema {
  string _ref = 1; string format = 2; string title = 3; string description = 4; Any default = 5;
  double multiple_of = 6; double maximum = 7; bool exclusive_maximum = 8; double minimum = 9;
  bool exclusive_minimum = 10; int64 max_length = 11; int64 min_length = 12; string pattern = 13;
  int64 max_items = 14; int64 min_items = 15; repeated string required = 19; repeated Any enum = 20; AdditionalPropertiesItem additional_properties = 21; TypeItem type = 22;
  ItemsItem items = 23; repeated Schema all_of = 24; Properties properties = 25; bool read_only = 27;
  Any example = 30; repeated NamedAny vendor_extension = 31;
}
message AdditionalPropertiesItem { Schema schema = 1; bool boolean = 2; }
message TypeItem { repeated string value = 1; }
message ItemsItem { repeated Schema schema = 1; }
message Properties { repeated NamedSchema additional_properties = 1; }
`;

const documentType = protobuf.parse(SCHEMA, { keepCase: true }).root.lookupType('openapi.v2.Document');

/** The decoded message as plain objects (absent and empty fields left out). */
export function decodeOpenApiV2Protobuf(bytes: Uint8Array): Record<string, any> {
  return documentType.toObject(documentType.decode(bytes), { defaults: false }) as Record<string, any>;
}
