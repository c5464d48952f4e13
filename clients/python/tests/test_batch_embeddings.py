import unittest

from mnemo_client import MnemoError

from .support import client


class BatchTest(unittest.TestCase):
    def test_operations_run_in_order_and_failures_stay_in_their_slot(self) -> None:
        mnemo = client()
        created = mnemo.batch([
            {"type": "create", "data": {"title": "Batch", "content": "Written in a batch", "tags": ["batch"]}},
            {"type": "search", "query": "written in a batch", "options": {"threshold": 0.5}},
        ])
        self.assertEqual(created["success"], True)
        first, search = created["data"]["operations"]
        memory_id = first["result"]["id"]
        self.assertEqual(search["result"]["results"][0]["id"], memory_id)

        mixed = mnemo.batch(
            [{"type": "read", "id": memory_id}, {"type": "read", "id": "00000000-0000-4000-8000-000000000000"}],
            continue_on_error=True,
        )
        self.assertEqual(mixed["success"], False)  # 207: the request was fine, one operation failed
        read, missing = mixed["data"]["operations"]
        self.assertEqual(read["result"]["title"], "Batch")
        self.assertEqual(missing["error"]["code"], "MEMORY_NOT_FOUND")

        atomic = mnemo.batch(
            [{"type": "delete", "id": memory_id}, {"type": "update", "id": "00000000-0000-4000-8000-000000000000", "data": {"title": "x"}}],
            atomic=True,
        )
        self.assertEqual([op["status"] for op in atomic["data"]["operations"]], ["failed", "failed"])
        self.assertEqual(atomic["data"]["operations"][0]["error"]["code"], "ROLLED_BACK")
        self.assertEqual(mnemo.memories.get(memory_id)["data"]["title"], "Batch")

    def test_a_malformed_batch_is_refused_whole(self) -> None:
        with self.assertRaises(MnemoError) as caught:
            client().batch([])
        self.assertEqual((caught.exception.code, caught.exception.status), ("INVALID_BATCH_REQUEST", 400))


class EmbeddingsTest(unittest.TestCase):
    def test_vectors_in_input_order(self) -> None:
        answer = client().embeddings.create(["hello world", "goodbye"], model="mnemo-embed-1536")
        self.assertEqual(answer["model"], "mnemo-embed-1536")
        self.assertEqual([e["index"] for e in answer["data"]], [0, 1])
        self.assertEqual(len(answer["data"][0]["embedding"]), 1536)
        self.assertEqual(answer["usage"]["prompt_tokens"], 4)  # "hello world" 2, "goodbye" 2 (cl100k_base)
        self.assertEqual(len(client().embeddings.create("one text")["data"]), 1)


if __name__ == "__main__":
    unittest.main()
