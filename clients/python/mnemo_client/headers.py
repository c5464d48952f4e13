"""HTTP headers as the client receives them: an http.client message, or any mapping (a dict, a framework's)."""
from __future__ import annotations

from email.message import Message
from typing import Mapping, Optional, Union

#: Headers: an http.client message, or any mapping of names (in any case) to values.
Headers = Union[Mapping[str, str], Message]


def header(headers: Headers, name: str) -> Optional[str]:
    """The value of ``name``, whatever the case of the name in ``headers``."""
    value = headers.get(name)
    if value is not None:
        return str(value)
    lowered = name.lower()
    for key, item in headers.items():
        if key.lower() == lowered:
            return str(item)
    return None
