"""A webhook receiver on loopback that keeps each delivery's raw body and headers, as a real receiver gets them."""
from __future__ import annotations

import queue
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, Tuple

Delivery = Tuple[str, Dict[str, str], bytes]


class Receiver:
    def __init__(self) -> None:
        self.deliveries: "queue.Queue[Delivery]" = queue.Queue()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.deliveries.put((self.path, dict(self.headers.items()), body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def next(self, timeout: float = 15.0) -> Delivery:
        return self.deliveries.get(timeout=timeout)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
