import re
import socket
import unittest

from mnemo_client import MnemoClient, MnemoError

from .support import client, env, unique


class ErrorsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.mnemo = client()

    def test_404_carries_code_status_request_id_and_message(self) -> None:
        with self.assertRaises(MnemoError) as caught:
            self.mnemo.memories.get("00000000-0000-4000-8000-000000000000")
        error = caught.exception
        self.assertEqual((error.code, error.status), ("MEMORY_NOT_FOUND", 404))
        self.assertRegex(error.request_id or "", r"^req_")
        self.assertTrue(error.message)

    def test_400_names_the_field(self) -> None:
        with self.assertRaises(MnemoError) as caught:
            self.mnemo.memories.create(title="   ", content="x", memory_type="Not A Type")
        error = caught.exception
        self.assertEqual((error.code, error.status), ("VALIDATION_ERROR", 400))
        self.assertRegex(error.request_id or "", r"^req_")
        self.assertEqual(sorted(d["field"] for d in error.details), ["memory_type", "title"])

    def test_g11_envelope_takes_the_request_id_from_the_header(self) -> None:
        # G11 error bodies carry no request id: it comes from X-Request-Id.
        with self.assertRaises(MnemoError) as caught:
            self.mnemo.secrets.get(unique("missing"))
        error = caught.exception
        self.assertEqual((error.code, error.status), ("RESOURCE_NOT_FOUND", 404))
        self.assertRegex(error.request_id or "", r"^req_")

    def test_g5_details_are_kept_as_sent(self) -> None:
        with self.assertRaises(MnemoError) as caught:
            self.mnemo.embeddings.create("   ")
        self.assertEqual(caught.exception.code, "INVALID_REQUEST")
        self.assertEqual(caught.exception.details["reason"], "empty_input")

    def test_a_bad_key_is_401(self) -> None:
        stranger = MnemoClient(env("MNEMO_URL"), "mnemo_live_" + "A" * 36)
        with self.assertRaises(MnemoError) as caught:
            stranger.memories.list()
        self.assertEqual((caught.exception.code, caught.exception.status), ("UNAUTHORIZED", 401))

    def test_another_tenant_sees_nothing(self) -> None:
        memory = self.mnemo.memories.create(title="Ours", content="Only our tenant reads this")["data"]
        other = client("MNEMO_OTHER_TENANT_KEY", workspace=self.mnemo.workspace)
        with self.assertRaises(MnemoError) as caught:
            other.memories.get(memory["id"])
        self.assertEqual(caught.exception.code, "MEMORY_NOT_FOUND")
        self.assertEqual(other.memories.list()["pagination"]["total"], 0)

    def test_no_server_is_a_connection_error(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        dead = MnemoClient(f"http://127.0.0.1:{port}", env("MNEMO_KEY"), max_retries=0)
        with self.assertRaises(MnemoError) as caught:
            dead.memories.list()
        self.assertEqual((caught.exception.code, caught.exception.status), ("CONNECTION_ERROR", None))
        self.assertTrue(re.search(str(port), caught.exception.message))


if __name__ == "__main__":
    unittest.main()
