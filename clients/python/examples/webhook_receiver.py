"""A webhook receiver that accepts only deliveries Mnemo signed with the webhook's secret.

    MNEMO_WEBHOOK_SECRET=whsec_… python3 examples/webhook_receiver.py 8000
"""
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from mnemo_client import WebhookVerificationError, verify_webhook_signature

SECRET = os.environ["MNEMO_WEBHOOK_SECRET"]


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))  # the raw body, before any parsing
        try:
            event = verify_webhook_signature(body, self.headers, SECRET)
        except WebhookVerificationError as refused:
            self.send_response(400)
            self.end_headers()
            self.wfile.write(str(refused).encode())
            return
        print("received", event["type"], event["id"], flush=True)  # at least once: drop an id seen before
        self.send_response(204)
        self.end_headers()


server = HTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 8000), Receiver)
print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
server.serve_forever()
