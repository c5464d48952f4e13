import unittest

from mnemo_client import NULL, MnemoClient, MnemoError

from .support import client, env, unique


class SecretsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.mnemo = client()

    def test_versions_list_and_delete(self) -> None:
        name = unique("db")
        created = self.mnemo.secrets.create(name, "first", tags=["prod"], expires_in="30d")
        self.assertEqual((created["version"], created["value"]), (1, "first"))
        updated = self.mnemo.secrets.update(name, "second", expires_in=NULL)
        self.assertEqual((updated["version"], updated["expiresAt"]), (2, None))
        self.assertEqual(self.mnemo.secrets.get(name)["value"], "second")
        self.assertEqual(self.mnemo.secrets.get(name, version=1)["value"], "first")
        listed = self.mnemo.secrets.list(tags=["prod"], limit=100)
        self.assertIn(name, [s["name"] for s in listed["data"]])
        self.assertNotIn("value", listed["data"][0])
        self.mnemo.secrets.delete(name)
        with self.assertRaises(MnemoError) as caught:
            self.mnemo.secrets.get(name)
        self.assertEqual(caught.exception.status, 404)

    def test_an_idempotency_key_replays_the_first_answer(self) -> None:
        name, key = unique("replayed"), unique("idem")
        first = self.mnemo.secrets.create(name, "v", idempotency_key=key)
        again = self.mnemo.secrets.create(name, "v", idempotency_key=key)
        self.assertEqual(again, first)
        with self.assertRaises(MnemoError) as caught:
            self.mnemo.secrets.create(name, "v")
        self.assertEqual(caught.exception.code, "CONFLICT")


class ApiKeysTest(unittest.TestCase):
    def test_create_list_update_rotate_revoke(self) -> None:
        mnemo = client()
        made = mnemo.api_keys.create(unique("reader"), scopes=["memories:read"], tier="free")
        self.assertTrue(made["key"].startswith("mnemo_live_"))
        self.assertEqual(made["scopes"], ["memories:read"])
        reader = MnemoClient(env("MNEMO_URL"), made["key"])
        self.assertEqual(reader.memories.list()["success"], True)
        with self.assertRaises(MnemoError) as caught:
            reader.memories.create(title="t", content="c")
        self.assertEqual(caught.exception.code, "PERMISSION_DENIED")

        self.assertEqual(mnemo.api_keys.get(made["id"])["name"], made["name"])
        self.assertIn(made["id"], [k["id"] for k in mnemo.api_keys.list(limit=100)["data"]])
        self.assertEqual(mnemo.api_keys.update(made["id"], name="renamed")["name"], "renamed")

        rotated = mnemo.api_keys.rotate(made["id"], grace_period_seconds=0)
        self.assertNotEqual(rotated["key"], made["key"])
        self.assertEqual(mnemo.api_keys.get(made["id"])["replacedBy"], rotated["id"])
        mnemo.api_keys.revoke(rotated["id"])
        with self.assertRaises(MnemoError) as caught:
            MnemoClient(env("MNEMO_URL"), rotated["key"]).secrets.list()
        self.assertEqual((caught.exception.code, caught.exception.status), ("AUTHENTICATION_REQUIRED", 401))


class McpApprovalsTest(unittest.TestCase):
    def test_four_eyes_approval_opens_the_resource(self) -> None:
        requester = client()
        approver = client("MNEMO_APPROVER_KEY")
        env_name = unique("env")[:30].replace("-", "_")
        requester.secrets.create(f"{env_name}.db", "s3cret")
        uri = f"svc://secrets/{env_name}/db"
        registered = requester.mcp.register_resource(uri, "Database password", approvers=[env("MNEMO_APPROVER_USER")])
        self.assertTrue(registered["requiresApproval"])
        self.assertIn(uri, [r["uri"] for r in requester.mcp.list_resources()["resources"]])

        with self.assertRaises(MnemoError) as caught:
            requester.mcp.read_resource(uri)
        self.assertEqual(caught.exception.code, "PERMISSION_DENIED")
        self.assertEqual(caught.exception.details["reason"], "approval_required")

        asked = requester.mcp.request_approval(uri, reason="rotate the database password")
        self.assertEqual(asked["status"], "pending")
        pending = approver.mcp.list_approvals(status="pending", resource=uri)["data"]
        self.assertEqual([a["approvalId"] for a in pending], [asked["approvalId"]])

        with self.assertRaises(MnemoError) as caught:
            requester.mcp.respond(asked["approvalId"], "approve")
        self.assertEqual(caught.exception.details["reason"], "not_an_approver")

        answered = approver.mcp.respond(asked["approvalId"], "approve", reason="ok")
        self.assertEqual(answered["status"], "approved")
        token = answered["accessToken"]
        self.assertTrue(token and token.startswith("mcp_at_"))
        self.assertEqual(requester.mcp.read_resource(uri, access_token=token)["value"], "s3cret")
        self.assertEqual(requester.mcp.get_approval(asked["approvalId"])["approvedBy"], env("MNEMO_APPROVER_USER"))
        operations = [row["operation"] for row in requester.mcp.audit(resource=uri)["logs"]]
        self.assertIn("read", operations)


if __name__ == "__main__":
    unittest.main()
