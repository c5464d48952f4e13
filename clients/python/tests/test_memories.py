import unittest

from mnemo_client import NULL

from .support import client


class MemoriesTest(unittest.TestCase):
    def setUp(self) -> None:
        self.mnemo = client()

    def test_create_get_update_list_delete(self) -> None:
        created = self.mnemo.memories.create(
            title="Release process", content="We deploy with blue/green on Fridays", memory_type="workflow", tags=["ops"],
            metadata={"team": "platform"},
        )
        memory = created["data"]
        self.assertEqual(memory["title"], "Release process")
        self.assertEqual(memory["tags"], ["ops"])
        self.assertEqual(memory["version"], 1)

        got = self.mnemo.memories.get(memory["id"][:8])["data"]
        self.assertEqual(got["id"], memory["id"])
        self.assertEqual(got["access_count"], 1)

        updated = self.mnemo.memories.update(memory["id"], content="We deploy with blue/green on Tuesdays")["data"]
        self.assertEqual(updated["content"], "We deploy with blue/green on Tuesdays")
        self.assertEqual(updated["version"], 2)

        self.mnemo.memories.create(title="Coffee", content="The coffee machine is descaled on Mondays", tags=["office"])
        listed = self.mnemo.memories.list(tags=["ops"], limit=10)
        self.assertEqual([m["id"] for m in listed["data"]], [memory["id"]])
        self.assertEqual(listed["pagination"]["total"], 1)
        self.assertEqual(self.mnemo.memories.list()["pagination"]["total"], 2)

        deleted = self.mnemo.memories.delete(memory["id"])
        self.assertEqual(deleted["data"]["id"], memory["id"])
        history = self.mnemo.memories.history(memory["id"])["data"]
        self.assertIsNone(history["memory"])
        tombstone = history["tombstone"]
        assert tombstone is not None
        self.assertEqual(tombstone["id"], memory["id"])

    def test_search_hybrid_and_similar(self) -> None:
        deploy = self.mnemo.memories.create(title="Deploys", content="We deploy with blue/green on Fridays")["data"]
        self.mnemo.memories.create(title="Lunch", content="The canteen serves soup every Wednesday")
        twin = self.mnemo.memories.create(title="Deploys again", content="We deploy with blue/green on Fridays too")["data"]

        found = self.mnemo.memories.search("deploy blue/green Fridays", threshold=0.5, limit=5)["data"]
        self.assertEqual(found["results"][0]["id"], deploy["id"])
        self.assertGreaterEqual(found["results"][0]["similarity_score"], 0.5)

        hybrid = self.mnemo.memories.hybrid_search("canteen soup", top_k=3, threshold=0)
        self.assertEqual(hybrid["matches"][0]["title"], "Lunch")
        self.assertIn("<mark>", "".join(hybrid["matches"][0]["highlights"]))
        self.assertGreaterEqual(hybrid["keyword_results"], 1)

        similar = self.mnemo.memories.similar(deploy["id"], threshold=0.5)["data"]
        self.assertEqual(similar["results"][0]["id"], twin["id"])

    def test_supersession_validity_and_history(self) -> None:
        old = self.mnemo.memories.create(title="Office", content="The office is in Leeds", valid_from="2020-01-01")["data"]
        new = self.mnemo.memories.create(title="Office", content="The office is in York", supersedes=[old["id"]])["data"]
        old_now = self.mnemo.memories.get(old["id"])["data"]
        self.assertEqual(old_now["superseded_by"], new["id"])
        self.assertEqual(old_now["valid_until"], new["valid_from"])

        # Only what holds now is listed, unless include_expired marks each memory's validity.
        self.assertEqual([m["id"] for m in self.mnemo.memories.list()["data"]], [new["id"]])
        marked = {m["id"]: m["validity"] for m in self.mnemo.memories.list(include_expired=True)["data"]}
        self.assertEqual(marked, {old["id"]: "superseded", new["id"]: "valid"})

        chain = self.mnemo.memories.history(old["id"])["data"]["chain"]
        self.assertEqual([link["id"] for link in chain["superseded_by"]], [new["id"]])

        # A memory that expires, then reopened with NULL; its earlier versions are kept.
        note = self.mnemo.memories.create(title="Note", content="Temporary", valid_until="2999-01-01")["data"]
        reopened = self.mnemo.memories.update(note["id"], valid_until=NULL)["data"]
        self.assertIsNone(reopened["valid_until"])
        versions = self.mnemo.memories.history(note["id"])["data"]["versions"]
        self.assertEqual([(v["version"], v["valid_until"]) for v in versions], [(1, "2999-01-01T00:00:00.000Z")])

    def test_supersede_after_the_fact(self) -> None:
        a = self.mnemo.memories.create(title="Price", content="A coffee costs 2 euros")["data"]
        b = self.mnemo.memories.create(title="Price", content="A coffee costs 3 euros")["data"]
        superseded = self.mnemo.memories.supersede(a["id"], by=b["id"])["data"]
        self.assertEqual(superseded["superseded_by"], b["id"])

    def test_forget_by_filter(self) -> None:
        self.mnemo.memories.create(title="Temp 1", content="Scratch one", tags=["scratch"])
        self.mnemo.memories.create(title="Temp 2", content="Scratch two", tags=["scratch"])
        keep = self.mnemo.memories.create(title="Keep", content="Keep this", tags=["keep"])["data"]
        dry = self.mnemo.memories.forget({"tags": ["scratch"]}, dry_run=True)["data"]
        self.assertEqual(dry["count"], 2)
        done = self.mnemo.memories.forget({"tags": ["scratch"]})["data"]
        self.assertEqual(done["deleted"], 2)
        self.assertEqual([m["id"] for m in self.mnemo.memories.list()["data"]], [keep["id"]])

    def test_x_api_key_header_and_workspaces(self) -> None:
        other = self.mnemo.with_workspace(f"{self.mnemo.workspace}-other")
        self.mnemo.memories.create(title="Here", content="Only in the first workspace")
        by_header = client(workspace=self.mnemo.workspace, auth_header="x-api-key")
        self.assertEqual(by_header.memories.list()["pagination"]["total"], 1)
        self.assertEqual(other.memories.list()["pagination"]["total"], 0)


if __name__ == "__main__":
    unittest.main()
