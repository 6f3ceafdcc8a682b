import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** A span as an OTLP/HTTP receiver saw it, whatever the encoding (http/json or http/protobuf). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, string | number | boolean>;
  /** The resource's `service.name`. */
  service: string;
  contentType: string;
}

/**
 * An OTLP/HTTP trace receiver on loopback (the test peer of an OpenTelemetry collector): it
 * decodes each POST /v1/traces, JSON or protobuf, into `spans`, and answers 200.
 */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  /** Every request body as received (events and all: what `spans` leaves out). */
  const bodies: Buffer[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const type = String(req.headers["content-type"] ?? "");
      contentTypes.push(type);
      const body = Buffer.concat(chunks);
      bodies.push(body);
      if (req.url === "/v1/traces")
        spans.push(...(type.includes("protobuf") ? fromProtobuf(body, type) : fromJson(body, type)));
      res.writeHead(200, { "content-type": type.includes("protobuf") ? "application/x-protobuf" : "application/json" });
      res.end(type.includes("protobuf") ? Buffer.alloc(0) : "{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    bodies,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

type JsonValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type JsonAttr = { key: string; value: JsonValue };

function jsonAttributes(list: JsonAttr[] | undefined): ReceivedSpan["attributes"] {
  const out: ReceivedSpan["attributes"] = {};
  for (const { key, value } of list ?? []) {
    out[key] =
      value.stringValue ??
      (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
      value.boolValue ??
      value.doubleValue ??
      "";
  }
  return out;
}

function fromJson(body: Buffer, contentType: string): ReceivedSpan[] {
  const request = JSON.parse(body.toString("utf8")) as {
    resourceSpans: Array<{
      resource?: { attributes?: JsonAttr[] };
      scopeSpans: Array<{
        spans: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: JsonAttr[] }>;
      }>;
    }>;
  };
  return request.resourceSpans.flatMap((rs) => {
    const service = String(jsonAttributes(rs.resource?.attributes)["service.name"] ?? "");
    return rs.scopeSpans.flatMap((ss) =>
      ss.spans.map((s) => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? "",
        name: s.name,
        attributes: jsonAttributes(s.attributes),
        service,
        contentType,
      })),
    );
  });
}

/** A protobuf message's fields: [field number, value] (varints as bigint, length-delimited as bytes). */
function fields(buf: Buffer): Array<[number, bigint | Buffer]> {
  const out: Array<[number, bigint | Buffer]> = [];
  let at = 0;
  const varint = (): bigint => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const b = buf[at++]!;
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
  };
  while (at < buf.length) {
    const key = Number(varint());
    const [field, wire] = [key >>> 3, key & 7];
    if (wire === 0) out.push([field, varint()]);
    else if (wire === 1) out.push([field, buf.subarray(at, (at += 8))]);
    else if (wire === 5) out.push([field, buf.subarray(at, (at += 4))]);
    else if (wire === 2) {
      const n = Number(varint());
      out.push([field, buf.subarray(at, (at += n))]);
    } else throw new Error(`unexpected protobuf wire type ${wire}`);
  }
  return out;
}
const sub = (f: Array<[number, bigint | Buffer]>, n: number) =>
  f.filter(([k, v]) => k === n && Buffer.isBuffer(v)).map(([, v]) => v as Buffer);

/** opentelemetry-proto: KeyValue {key = 1; AnyValue value = 2} with AnyValue {string 1, bool 2, int 3, double 4}. */
function protoAttributes(list: Buffer[]): ReceivedSpan["attributes"] {
  const out: ReceivedSpan["attributes"] = {};
  for (const kv of list) {
    const f = fields(kv);
    const key = sub(f, 1)[0]!.toString("utf8");
    const [[field, v]] = fields(sub(f, 2)[0] ?? Buffer.alloc(0)) as [[number, bigint | Buffer]];
    out[key] =
      field === 1
        ? (v as Buffer).toString("utf8")
        : field === 2
          ? v === 1n
          : field === 3
            ? Number(v as bigint)
            : (v as Buffer).readDoubleLE(0);
  }
  return out;
}

/**
 * ExportTraceServiceRequest {ResourceSpans resource_spans = 1}; ResourceSpans {Resource resource = 1;
 * ScopeSpans scope_spans = 2}; Resource {KeyValue attributes = 1}; ScopeSpans {Span spans = 2};
 * Span {trace_id 1, span_id 2, parent_span_id 4, name 5, attributes 9}.
 */
function fromProtobuf(body: Buffer, contentType: string): ReceivedSpan[] {
  return sub(fields(body), 1).flatMap((rsBytes) => {
    const rs = fields(rsBytes);
    const resource = sub(rs, 1)[0];
    const service = String(protoAttributes(resource ? sub(fields(resource), 1) : [])["service.name"] ?? "");
    return sub(rs, 2).flatMap((ss) =>
      sub(fields(ss), 2).map((spanBytes) => {
        const s = fields(spanBytes);
        return {
          traceId: sub(s, 1)[0]!.toString("hex"),
          spanId: sub(s, 2)[0]!.toString("hex"),
          parentSpanId: (sub(s, 4)[0] ?? Buffer.alloc(0)).toString("hex"),
          name: sub(s, 5)[0]!.toString("utf8"),
          attributes: protoAttributes(sub(s, 9)),
          service,
          contentType,
        };
      }),
    );
  });
}
