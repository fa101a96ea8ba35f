// Decodes an OTLP/HTTP protobuf ExportTraceServiceRequest (opentelemetry-proto's trace/v1 and common/v1
// field numbers) into the same shape the JSON form gives: only the fields the tests read. A plain wire-
// format reader, so the collector stand-in needs no protobuf package.

import type { OtlpSpan } from "./otlp-span.ts";

type Field = { no: number; wire: number; value: bigint | Buffer };

/** Every field of one message, in order (varint and fixed64 as bigint, length-delimited as bytes). */
function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const byte = buf[at++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (at < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, value: varint() });
    else if (wire === 1) {
      out.push({ no, wire, value: buf.readBigUInt64LE(at) });
      at += 8;
    } else if (wire === 2) {
      const length = Number(varint());
      out.push({ no, wire, value: buf.subarray(at, at + length) });
      at += length;
    } else if (wire === 5) {
      out.push({ no, wire, value: BigInt(buf.readUInt32LE(at)) });
      at += 4;
    } else throw new Error(`protobuf: wire type ${wire} not expected in OTLP traces`);
  }
  return out;
}

const bytesOf = (list: Field[], no: number) => list.filter((f) => f.no === no).map((f) => f.value as Buffer);
const first = (list: Field[], no: number) => list.find((f) => f.no === no)?.value;
const text = (value: unknown) => (value instanceof Buffer ? value.toString("utf8") : "");
const hex = (value: unknown) => (value instanceof Buffer ? value.toString("hex") : "");

function anyValue(buf: Buffer): unknown {
  const [f] = fields(buf);
  if (!f) return undefined;
  switch (f.no) {
    case 1:
      return text(f.value);
    case 2:
      return f.value === 1n;
    case 3:
      return Number(BigInt.asIntN(64, f.value as bigint));
    case 4: {
      const b = Buffer.alloc(8);
      b.writeBigUInt64LE(f.value as bigint);
      return b.readDoubleLE();
    }
    case 5:
      return bytesOf(fields(f.value as Buffer), 1).map(anyValue);
    default:
      return undefined;
  }
}

function attributes(list: Field[], no: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of bytesOf(list, no)) {
    const f = fields(kv);
    const value = first(f, 2);
    out[text(first(f, 1))] = value instanceof Buffer ? anyValue(value) : undefined;
  }
  return out;
}

/** The spans of one OTLP protobuf trace export, with their resource's attributes. */
export function decodeOtlpProtobuf(body: Buffer): OtlpSpan[] {
  const spans: OtlpSpan[] = [];
  for (const resourceSpans of bytesOf(fields(body), 1)) {
    const rs = fields(resourceSpans);
    const resourceBytes = first(rs, 1);
    const resource = resourceBytes instanceof Buffer ? attributes(fields(resourceBytes), 1) : {};
    for (const scopeSpans of bytesOf(rs, 2)) {
      for (const spanBytes of bytesOf(fields(scopeSpans), 2)) {
        const s = fields(spanBytes);
        const status = first(s, 15);
        spans.push({
          traceId: hex(first(s, 1)),
          spanId: hex(first(s, 2)),
          parentSpanId: hex(first(s, 4)),
          name: text(first(s, 5)),
          kind: Number(first(s, 6) ?? 0n),
          attributes: attributes(s, 9),
          links: bytesOf(s, 13).map((l) => ({
            traceId: hex(first(fields(l), 1)),
            spanId: hex(first(fields(l), 2)),
          })),
          statusCode: status instanceof Buffer ? Number(first(fields(status), 3) ?? 0n) : 0,
          resource,
        });
      }
    }
  }
  return spans;
}
