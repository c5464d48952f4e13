import unittest

from mnemo_client import MnemoClient, MnemoError

from .dropping_proxy import DroppingProxy
from .support import client, env, unique


class StreamTest(unittest.TestCase):
    def test_resumes_after_a_dropped_connection_from_the_last_event_id(self) -> None:
        direct = client()
        proxy = DroppingProxy(env("MNEMO_URL"))
        self.addCleanup(proxy.close)
        through_proxy = MnemoClient(proxy.url, env("MNEMO_KEY"), workspace=direct.workspace)

        with through_proxy.stream(events=["memory.created"], reconnect_delay=0.05) as stream:
            first = direct.memories.create(title="One", content="Before the drop")["data"]
            event = next(stream)
            self.assertEqual((event.type, event.data["id"]), ("memory.created", first["id"]))
            self.assertTrue(event.id and event.id.startswith("evt_"))
            self.assertEqual(stream.last_event_id, event.id)

            proxy.drop()
            second = direct.memories.create(title="Two", content="While disconnected")["data"]
            third = direct.memories.create(title="Three", content="Also while disconnected")["data"]

            # Replayed after reconnecting with Last-Event-ID: what was missed, in order, and nothing twice.
            replayed = [next(stream), next(stream)]
            self.assertEqual([e.data["id"] for e in replayed], [second["id"], third["id"]])
            self.assertEqual(stream.reconnects, 1)
            self.assertEqual(proxy.connections, 2)
            self.assertEqual(stream.last_event_id, replayed[-1].id)

            # A new stream may start from a saved id, too.
            with direct.stream(events=["memory.created"], last_event_id=event.id) as again:
                self.assertEqual(next(again).data["id"], second["id"])

    def test_a_revoked_key_ends_the_stream_with_its_error_frame(self) -> None:
        mnemo = client()
        minted = mnemo.api_keys.create(unique("streamer"), scopes=["memories:read"])
        with MnemoClient(env("MNEMO_URL"), minted["key"], workspace=mnemo.workspace).stream() as stream:
            mnemo.api_keys.revoke(minted["id"])
            mnemo.memories.create(title="After", content="Written after the revocation")
            with self.assertRaises(MnemoError) as caught:
                next(stream)
        self.assertEqual((caught.exception.code, caught.exception.status), ("AUTH_ERROR", None))

    def test_filters_and_a_refused_stream(self) -> None:
        mnemo = client()
        with mnemo.stream(events=["memory.created"], filters={"tags": "wanted"}) as stream:
            mnemo.memories.create(title="Skip", content="Not this one", tags=["other"])
            wanted = mnemo.memories.create(title="Take", content="This one", tags=["wanted"])["data"]
            self.assertEqual(next(stream).data["id"], wanted["id"])
        with self.assertRaises(MnemoError) as caught:
            mnemo.stream(events=["no.such.event"])
        self.assertEqual((caught.exception.code, caught.exception.status), ("VALIDATION_ERROR", 400))


if __name__ == "__main__":
    unittest.main()
