"""A tiny OTLP/HTTP trace receiver for the tests, run as its own process.

``python otlp_support.py`` listens on a free loopback port, prints ``port <n>``, then,
for each ``POST /v1/traces`` (protobuf), prints one JSON line per received span
(``name``, ``span_id``, ``parent_span_id``, ``kind``, ``attributes``) and answers with
an empty ``ExportTraceServiceResponse``. It stops when its standard input closes.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

_lock = threading.Lock()


def _value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item) for item in value.array_value.values]
    return getattr(value, kind) if kind else None


class _Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/v1/traces":
            self.send_response(404)
            self.end_headers()
            return
        request = ExportTraceServiceRequest.FromString(body)
        with _lock:
            for resource_spans in request.resource_spans:
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        line = {
                            "name": span.name,
                            "scope": scope_spans.scope.name,
                            "span_id": span.span_id.hex(),
                            "parent_span_id": span.parent_span_id.hex(),
                            "trace_id": span.trace_id.hex(),
                            "kind": span.kind,
                            "status": span.status.code,
                            "attributes": {a.key: _value(a.value) for a in span.attributes},
                        }
                        print(json.dumps(line), flush=True)
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(f"port {server.server_address[1]}", flush=True)
    sys.stdin.read()  # until the test closes our stdin
    server.shutdown()


if __name__ == "__main__":
    serve()
