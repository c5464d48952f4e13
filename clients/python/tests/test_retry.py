import json
import time
import unittest
from typing import List

from mnemo_client import MnemoClient, MnemoError, retry_delay

from .mock_server import ScriptedServer
from .support import client, env, unique

LIMITED = (429, {"Content-Type": "application/json", "Retry-After": "1", "X-Request-Id": "req_limited"},
           json.dumps({"success": False, "error": {"code": "RATE_LIMITED", "message": "slow down"}}).encode())
OK = (200, {"Content-Type": "application/json"}, json.dumps({"success": True, "data": []}).encode())
BUSY = (503, {"Content-Type": "application/json"},
        json.dumps({"success": False, "error": {"code": "SERVICE_UNAVAILABLE", "message": "busy"}}).encode())


class RetryTest(unittest.TestCase):
    def serve(self, *answers):
        server = ScriptedServer(list(answers))
        self.addCleanup(server.close)
        return server

    def test_a_429_is_retried_after_retry_after(self) -> None:
        server = self.serve(LIMITED, OK)
        mnemo = MnemoClient(server.url, "mnemo_live_test")
        started = time.monotonic()
        self.assertEqual(mnemo.memories.create(title="t", content="c"), {"success": True, "data": []})
        self.assertGreaterEqual(time.monotonic() - started, 0.95)
        self.assertEqual([r[0] for r in server.requests], ["POST", "POST"])

    def test_attempts_are_bounded_and_the_last_429_is_raised(self) -> None:
        waits: List[float] = []
        server = self.serve(LIMITED)
        mnemo = MnemoClient(server.url, "mnemo_live_test", max_retries=2, sleep=waits.append)
        with self.assertRaises(MnemoError) as caught:
            mnemo.memories.list()
        self.assertEqual((caught.exception.code, caught.exception.status, caught.exception.request_id), ("RATE_LIMITED", 429, "req_limited"))
        self.assertEqual(waits, [1.0, 1.0])
        self.assertEqual(len(server.requests), 3)

    def test_a_wait_longer_than_max_retry_wait_is_raised_at_once(self) -> None:
        hourly = (429, {"Retry-After": "3600"}, b"")
        server = self.serve(hourly, OK)
        mnemo = MnemoClient(server.url, "mnemo_live_test", sleep=self.fail)
        with self.assertRaises(MnemoError) as caught:
            mnemo.memories.list()
        self.assertEqual(caught.exception.retry_after, 3600)
        self.assertEqual(len(server.requests), 1)

    def test_a_503_is_retried_for_reads_never_for_a_create(self) -> None:
        waits: List[float] = []
        server = self.serve(BUSY, OK)
        reads = MnemoClient(server.url, "mnemo_live_test", sleep=waits.append)
        self.assertEqual(reads.memories.list()["success"], True)
        self.assertEqual(len(server.requests), 2)

        server = self.serve(BUSY, OK)
        writes = MnemoClient(server.url, "mnemo_live_test", sleep=self.fail)
        with self.assertRaises(MnemoError) as caught:
            writes.memories.create(title="t", content="c")
        self.assertEqual(caught.exception.code, "SERVICE_UNAVAILABLE")
        self.assertEqual(len(server.requests), 1)

    def test_g11_writes_carry_one_idempotency_key_across_retries(self) -> None:
        server = self.serve(BUSY, (201, {"Content-Type": "application/json"}, b'{"id": "sec_1"}'))
        mnemo = MnemoClient(server.url, "mnemo_live_test", sleep=lambda s: None)
        self.assertEqual(mnemo.secrets.create("db", "pw")["id"], "sec_1")
        keys = [r[2]["idempotency-key"] for r in server.requests]
        self.assertEqual(len(keys), 2)
        self.assertEqual(keys[0], keys[1])

    def test_retry_delay_reads_retry_after_then_the_reset_header(self) -> None:
        self.assertEqual(retry_delay({"Retry-After": "7"}, now=100.0), 7.0)
        self.assertEqual(retry_delay({"retry-after": "Thu, 01 Jan 1970 00:02:00 GMT"}, now=100.0), 20.0)
        self.assertEqual(retry_delay({"X-RateLimit-Reset": "130"}, now=100.0), 30.0)
        self.assertIsNone(retry_delay({}, now=100.0))

    def test_a_real_429_from_mnemo(self) -> None:
        # Batches are limited to 10 a minute per key in every tier; a new key starts with fresh counters. Windows
        # are aligned to the minute, so 21 requests are sure to meet the limit even across a window's end.
        minted = client().api_keys.create(unique("limited"), scopes=["memories:read", "memories:write"])
        limited = MnemoClient(env("MNEMO_URL"), minted["key"], max_retries=0)
        operations = [{"type": "create", "data": {"content": "never written"}}]
        with self.assertRaises(MnemoError) as caught:
            for _ in range(21):
                limited.batch(operations, validate_only=True)
        error = caught.exception
        self.assertEqual((error.code, error.status), ("RATE_LIMITED", 429))
        self.assertGreaterEqual(error.retry_after or 0, 1)
        self.assertRegex(error.request_id or "", r"^req_")


if __name__ == "__main__":
    unittest.main()
