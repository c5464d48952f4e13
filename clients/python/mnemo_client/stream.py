"""G8 event stream (``GET /api/v1/stream``, Server-Sent Events) as an iterator that resumes after a dropped
connection: it reconnects with ``Last-Event-ID`` set to the last id it saw, so Mnemo replays what was missed and
nothing twice (docs/events.md, "Resume")."""
from __future__ import annotations

import http.client
import json
import socket
from dataclasses import dataclass
from typing import Any, Dict, Generator, Iterator, List, Mapping, Optional, Sequence

from ._http import Transport
from .errors import MnemoError

#: Error frames after which reconnecting is right (the server says when); AUTH_ERROR (a revoked key) is raised.
_RECONNECTABLE = frozenset({"RATE_LIMITED", "CONNECTION_ERROR"})


@dataclass(frozen=True)
class StreamEvent:
    """One frame: ``type`` (``memory.created`` …, or ``heartbeat``), its ``id`` (``evt_…``), ``data`` (the event's
    payload, parsed JSON)."""

    type: str
    id: Optional[str]
    data: Any


class EventStream(Iterator[StreamEvent]):
    """Connected when made (a refused stream raises MnemoError there); iterate to receive events.
    ``last_event_id`` is the resume point (pass it to a later ``client.stream`` to continue from there). Use as a
    context manager, or call ``close()``."""

    def __init__(
        self,
        transport: Transport,
        *,
        events: Optional[Sequence[str]] = None,
        filters: Optional[Mapping[str, str]] = None,
        last_event_id: Optional[str] = None,
        heartbeat: Optional[int] = None,
        include_heartbeats: bool = False,
        max_reconnects: int = 5,
        reconnect_delay: Optional[float] = None,
        read_timeout: Optional[float] = None,
    ) -> None:
        self._t = transport
        self._query: Dict[str, Any] = {"events": list(events) if events else None, "heartbeat": heartbeat}
        for key, value in (filters or {}).items():
            self._query[f"filters[{key}]"] = value
        self.last_event_id = last_event_id
        self._include_heartbeats = include_heartbeats
        self._max_reconnects = max_reconnects
        # None: wait as the server's `retry:` line says (5 s from Mnemo), as EventSource does.
        self._reconnect_delay = reconnect_delay
        self._server_retry = 5.0
        # Mnemo sends a heartbeat every `heartbeat` seconds (at least 30): a longer silence is a dead connection.
        self._read_timeout = read_timeout if read_timeout is not None else max(heartbeat or 30, 30) + 15
        self._response: Optional[http.client.HTTPResponse] = None
        #: How many times the stream reconnected.
        self.reconnects = 0
        # Connected before returning, so that whatever happens next is on the stream (and a refusal raises here).
        self._connect()
        self._frames = self._run()

    def __iter__(self) -> "EventStream":
        return self

    def __next__(self) -> StreamEvent:
        return next(self._frames)

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._drop()
        self._frames.close()

    def _connect(self) -> None:
        headers = {"Accept": "text/event-stream"}
        if self.last_event_id:
            headers["Last-Event-ID"] = self.last_event_id
        self._response = self._t.open_stream("/api/v1/stream", self._query, headers, self._read_timeout)

    def _drop(self) -> None:
        if self._response is not None:
            try:
                self._response.close()
            except OSError:
                pass
            self._response = None

    def _run(self) -> Generator[StreamEvent, None, None]:
        failures = 0
        while True:
            if self._response is None:
                try:
                    self._connect()
                except MnemoError as error:
                    wait = self._wait_after(error)
                    if wait is None or failures >= self._max_reconnects:
                        raise
                    failures += 1
                    self._t.sleep(wait)
                    continue
            frame = self._read_frame()
            if frame is None:  # the connection dropped: resume from the last id seen
                self._drop()
                if failures >= self._max_reconnects:
                    raise MnemoError(
                        f"stream dropped {failures + 1} times in a row; last event id {self.last_event_id}", code="CONNECTION_ERROR",
                    )
                failures += 1
                self.reconnects += 1
                self._t.sleep(self._delay())
                continue
            if frame.id is not None:
                self.last_event_id = frame.id
            if frame.type == "error":  # the server ends the stream after it
                self._drop()
                data = frame.data if isinstance(frame.data, dict) else {}
                code = str(data.get("code", "STREAM_ERROR"))
                closed = MnemoError(str(data.get("message", "stream closed by the server")), code=code)
                wait = float(data.get("retry_after", 5000)) / 1000.0
                if code not in _RECONNECTABLE or failures >= self._max_reconnects or wait > self._t.retry.max_wait:
                    raise closed
                failures += 1
                self.reconnects += 1
                self._t.sleep(wait if self._reconnect_delay is None else max(wait, self._reconnect_delay))
                continue
            failures = 0
            if frame.type == "heartbeat" and not self._include_heartbeats:
                continue
            yield frame

    def _wait_after(self, error: MnemoError) -> Optional[float]:
        """Whether a failed (re)connection is worth another try, and after how long."""
        if error.status is None:
            return self._delay()
        if error.status == 429 or error.status in (502, 503, 504):
            wait = error.retry_after if error.retry_after is not None else self._delay()
            return wait if wait <= self._t.retry.max_wait else None
        return None

    def _delay(self) -> float:
        return self._reconnect_delay if self._reconnect_delay is not None else self._server_retry

    def _read_frame(self) -> Optional[StreamEvent]:
        """The next dispatched frame, or None when the connection ended or failed."""
        assert self._response is not None
        event_type, event_id, data = "message", None, []  # type: str, Optional[str], List[str]
        while True:
            try:
                line = self._response.readline()
            except (OSError, socket.timeout, http.client.HTTPException, ValueError):
                return None
            if not line:
                return None
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            if text == "":
                if data:
                    return StreamEvent(type=event_type, id=event_id, data=_parse("\n".join(data)))
                event_type, event_id, data = "message", None, []  # a block without data (`retry:`) dispatches nothing
                continue
            if text.startswith(":"):
                continue
            name, _, value = text.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "event":
                event_type = value
            elif name == "data":
                data.append(value)
            elif name == "id" and "\0" not in value:
                event_id = value
            elif name == "retry" and value.isdigit():
                self._server_retry = int(value) / 1000.0


def _parse(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data

