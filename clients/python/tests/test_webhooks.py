import os
import subprocess
import sys
import time
import unittest
import urllib.error
import urllib.request
from pathlib import Path

from mnemo_client import WebhookVerificationError, verify_webhook_signature

from .receiver import Receiver
from .support import client, unique


class WebhooksTest(unittest.TestCase):
    """Signatures made by Mnemo itself: real deliveries to a receiver on loopback (the test server may reach it)."""

    def setUp(self) -> None:
        self.mnemo = client()
        self.receiver = Receiver()
        self.addCleanup(self.receiver.close)

    def test_memory_webhook_deliveries_verify_with_both_signatures(self) -> None:
        hook = self.mnemo.webhooks.create(f"{self.receiver.url}/g9", ["memory.created"])["data"]
        self.assertIn(hook["id"], [w["id"] for w in self.mnemo.webhooks.list()["data"]["webhooks"]])
        memory = self.mnemo.memories.create(title="Hook", content="Delivered to Python")["data"]

        path, headers, body = self.receiver.next()
        self.assertEqual(path, "/g9")
        self.assertRegex(headers["X-Service-Signature"], r"^[0-9a-f]{64}$")
        self.assertIn("webhook-signature", {k.lower() for k in headers})
        event = verify_webhook_signature(body, headers, hook["secret"])
        self.assertEqual((event["type"], event["data"]["id"]), ("memory.created", memory["id"]))

        with self.assertRaises(WebhookVerificationError):
            verify_webhook_signature(body.replace(b"Python", b"Pithon"), headers, hook["secret"])
        with self.assertRaises(WebhookVerificationError):
            verify_webhook_signature(body, headers, "whsec_" + "A" * 44)
        # The Standard Webhooks timestamp bounds replays.
        with self.assertRaisesRegex(WebhookVerificationError, "timestamp"):
            verify_webhook_signature(body, headers, hook["secret"], now=time.time() + 301)

        deleted = self.mnemo.webhooks.delete(hook["id"])
        self.assertEqual(deleted["data"], {"id": hook["id"], "deleted": True})

    def test_security_webhook_deliveries_verify_with_the_timestamped_signature(self) -> None:
        secret = "receiver-secret-" + unique("s")
        hook = self.mnemo.security_webhooks.create(f"{self.receiver.url}/g11", ["secret.created"], secret=secret)
        self.addCleanup(self.mnemo.security_webhooks.delete, hook["id"])
        self.assertEqual(hook["secret"], secret)
        self.assertIn(hook["id"], [w["id"] for w in self.mnemo.security_webhooks.list()["data"]])
        name = unique("hooked")
        self.mnemo.secrets.create(name, "value")

        event = None
        while event is None or event["data"].get("name") != name:  # other tests' secrets of this tenant too
            _, headers, body = self.receiver.next()
            self.assertRegex(headers["X-Service-Signature"], r"^t=\d+,v1=[0-9a-f]{64}$")
            event = verify_webhook_signature(body, headers, secret)
        self.assertEqual(event["type"], "secret.created")
        self.assertNotIn("value", event["data"])

        with self.assertRaisesRegex(WebhookVerificationError, "timestamp"):
            verify_webhook_signature(body, headers, secret, now=time.time() - 301)
        self.assertEqual(verify_webhook_signature(body, headers, secret, now=time.time() + 290, tolerance=600)["id"], event["id"])
        with self.assertRaisesRegex(WebhookVerificationError, "does not match"):
            verify_webhook_signature(body + b" ", headers, secret)
        with self.assertRaisesRegex(WebhookVerificationError, "missing"):
            verify_webhook_signature(body, {"Content-Type": "application/json"}, secret)

    def test_the_receiver_example_takes_mnemos_deliveries_and_refuses_forgeries(self) -> None:
        example = Path(__file__).resolve().parent.parent / "examples" / "webhook_receiver.py"
        secret = "whsec_" + "c2VjcmV0LWZvci10aGUtcmVjZWl2ZXItZXhhbXBsZQ=="
        receiver = subprocess.Popen(
            [sys.executable, str(example), "0"], stdout=subprocess.PIPE, text=True,
            env={**os.environ, "MNEMO_WEBHOOK_SECRET": secret, "PYTHONPATH": str(example.parent.parent)},
        )
        self.addCleanup(receiver.wait)
        self.addCleanup(receiver.kill)
        assert receiver.stdout is not None
        url = receiver.stdout.readline().split()[-1]
        hook = self.mnemo.webhooks.create(url, ["memory.created"], secret=secret)["data"]
        self.addCleanup(self.mnemo.webhooks.delete, hook["id"])
        self.mnemo.memories.create(title="Example", content="For the receiver example")
        self.assertRegex(receiver.stdout.readline(), r"^received memory\.created evt_\w+$")

        forged = urllib.request.Request(url, data=b'{"id": "evt_forged"}', method="POST", headers={"X-Service-Signature": "0" * 64})
        with self.assertRaises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(forged, timeout=10)
        self.assertEqual(caught.exception.code, 400)

    def test_event_webhooks_create_list_delete(self) -> None:
        hook = self.mnemo.event_webhooks.create(f"{self.receiver.url}/g10", ["transfer.completed"], description="payments")["data"]
        self.assertTrue(hook["secret"].startswith("whsec_"))
        listed = self.mnemo.event_webhooks.list(event="transfer.completed")["data"]["webhooks"]
        self.assertIn(hook["id"], [w["id"] for w in listed])
        self.assertEqual(self.mnemo.event_webhooks.delete(hook["id"])["data"]["deleted"], True)


if __name__ == "__main__":
    unittest.main()
