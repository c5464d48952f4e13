"""What the tests share: the server and keys from the environment, and unique names so tests never meet."""
from __future__ import annotations

import os
import uuid

from mnemo_client import MnemoClient

NEEDED = "these tests run against a real Mnemo server: set MNEMO_URL and MNEMO_KEY (npm test does, in test/clients/python-client.test.ts)"


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set; {NEEDED}")
    return value


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def client(key_var: str = "MNEMO_KEY", **options: object) -> MnemoClient:
    """A client of the test server in a workspace no other test uses."""
    options.setdefault("workspace", unique("ws"))
    return MnemoClient(env("MNEMO_URL"), env(key_var), **options)  # type: ignore[arg-type]
