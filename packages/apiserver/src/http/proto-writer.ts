/**
 * A protobuf wire-format writer for messages this server builds itself (protobuf.ts reads the ones clients
 * send). Scalars at their zero value are left out, as proto3 encoders do, so a decoder sees the same message.
 * Nested messages are written into their own writer first: their length prefix needs their size.
 */

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_BYTES = 2;

export class ProtoWriter {
  private chunks: Buffer[] = [];
  private scratch: number[] = [];
  private size = 0;

  get length(): number {
    this.flushScratch();
    return this.size;
  }

  private flushScratch(): void {
    if (this.scratch.length === 0) return;
    this.chunks.push(Buffer.from(this.scratch));
    this.size += this.scratch.length;
    this.scratch = [];
  }

  private push(buf: Buffer): void {
    this.flushScratch();
    this.chunks.push(buf);
    this.size += buf.length;
  }

  /** An unsigned varint; negative int64s go as their 64-bit two's complement (ten bytes), as protobuf says. */
  private varint(value: number | bigint): void {
    if (typeof value === 'number' && value >= 0 && value <= Number.MAX_SAFE_INTEGER) {
      let v = value;
      while (v >= 0x80) {
        this.scratch.push((v % 0x80) | 0x80);
        v = Math.floor(v / 0x80);
      }
      this.scratch.push(v);
      return;
    }
    let big = BigInt.asUintN(64, BigInt(value));
    while (big >= 0x80n) {
      this.scratch.push(Number(big & 0x7fn) | 0x80);
      big >>= 7n;
    }
    this.scratch.push(Number(big));
  }

  private tag(field: number, wireType: number): void {
    this.varint(field * 8 + wireType);
  }

  string(field: number, value: string | undefined): this {
    if (!value) return this;
    const bytes = Buffer.from(value, 'utf8');
    this.tag(field, WIRE_BYTES);
    this.varint(bytes.length);
    this.push(bytes);
    return this;
  }

  bool(field: number, value: boolean | undefined): this {
    return value ? this.oneofBool(field, true) : this;
  }

  /** A bool that is a `oneof` member: written even when false, since being set is what the oneof says. */
  oneofBool(field: number, value: boolean): this {
    this.tag(field, WIRE_VARINT);
    this.varint(value ? 1 : 0);
    return this;
  }

  int64(field: number, value: number | undefined): this {
    if (!value) return this;
    this.tag(field, WIRE_VARINT);
    this.varint(Math.trunc(value));
    return this;
  }

  double(field: number, value: number | undefined): this {
    if (!value) return this;
    this.tag(field, WIRE_FIXED64);
    const bytes = Buffer.alloc(8);
    bytes.writeDoubleLE(value);
    this.push(bytes);
    return this;
  }

  /** A nested message, written even when empty: its presence is what a oneof or a message field says. */
  message(field: number, message: ProtoWriter): this {
    this.tag(field, WIRE_BYTES);
    this.varint(message.length);
    for (const chunk of message.finish()) this.push(chunk);
    return this;
  }

  private finish(): Buffer[] {
    this.flushScratch();
    return this.chunks;
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.finish(), this.size);
  }
}
