"""A tiny HTTP server on loopback that answers from a script, for what a real Mnemo cannot be made to do on cue."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, List, Tuple

Answer = Tuple[int, Dict[str, str], bytes]


class ScriptedServer:
    """Answers the n-th request with the n-th scripted answer (the last one again after that), recording each."""

    def __init__(self, answers: List[Answer]) -> None:
        self.answers = answers
        self.requests: List[Tuple[str, str, Dict[str, str]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                outer.requests.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}))
                status, headers, body = outer.answers[min(len(outer.requests), len(outer.answers)) - 1]
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_DELETE = _answer

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
