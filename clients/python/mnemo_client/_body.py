"""Request bodies: the fields a caller gave, with an explicit way to send JSON null."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence


class _Null:
    """Sends JSON ``null`` where leaving a field out means "keep it" (``valid_until``, ``expiresIn`` …)."""

    def __repr__(self) -> str:
        return "NULL"


#: Pass as a field's value to send JSON ``null``; ``None`` leaves the field out.
NULL: Any = _Null()


def fields(**values: Any) -> Dict[str, Any]:
    """The body fields that were given: ``None`` is left out, ``NULL`` becomes JSON null."""
    return {k: (None if v is NULL else v) for k, v in values.items() if v is not None}


def as_list(values: Optional[Sequence[str]]) -> Optional[List[str]]:
    return None if values is None else list(values)
