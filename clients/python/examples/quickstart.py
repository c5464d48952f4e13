"""Quick start: store a memory, find it again, and follow new memories as they are written.

    MNEMO_URL=http://127.0.0.1:8080 MNEMO_KEY=mnemo_live_… python3 examples/quickstart.py
"""
import os

from mnemo_client import MnemoClient, MnemoError

mnemo = MnemoClient(os.environ["MNEMO_URL"], os.environ["MNEMO_KEY"], workspace=os.environ.get("MNEMO_WORKSPACE"))

with mnemo.stream(events=["memory.created"]) as events:
    memory = mnemo.memories.create(
        title="Release process", content="We deploy with blue/green on Fridays", tags=["ops"],
    )["data"]
    print("stored", memory["id"])

    found = mnemo.memories.search("how do we deploy?", threshold=0.5, limit=5)["data"]
    print("best match:", found["results"][0]["title"])

    event = next(events)
    print("event:", event.type, event.data["id"] == memory["id"])

try:
    mnemo.memories.get("00000000-0000-4000-8000-000000000000")
except MnemoError as error:
    print("error:", error.code, error.status)
