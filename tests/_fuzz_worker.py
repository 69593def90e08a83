"""A small pool of forked worker processes that runs untrusted calls in isolation.

Each call runs in a child process forked from the test process (so every module and
cached corpus is already loaded), under a memory limit (``resource.RLIMIT_AS``) and a
time limit enforced twice: an interval timer inside the child stops a call that hangs
in Python code, and the parent kills a child that does not answer in time (a hang
inside C code). A child that dies (killed, out of memory, a crash of the interpreter)
is replaced by a fresh fork and the call is reported with its cause; the calls after it
are not affected.

The parent sends the index of a call through a pipe; the child looks the call up in
the table it inherited by ``fork``, runs it and sends back a short verdict string.
"""

from __future__ import annotations

import os
import resource
import select
import signal
import struct
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["Pool", "CallTimeout"]


class CallTimeout(BaseException):
    """Raised inside a child when the interval timer of a call expires (a BaseException,
    so that no ``except Exception`` of the code under test can swallow it)."""


def _on_alarm(signum, frame):
    raise CallTimeout


def _vm_size() -> int:
    """Current virtual memory size of this process, in bytes."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0  # pragma: no cover - /proc is always there on Linux


def _send(fd: int, payload: bytes) -> None:
    data = struct.pack("<I", len(payload)) + payload
    while data:
        data = data[os.write(fd, data) :]


def _recv(fd: int) -> bytes | None:
    head = _read_exact(fd, 4)
    if head is None:
        return None
    return _read_exact(fd, struct.unpack("<I", head)[0])


def _read_exact(fd: int, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


class _Child:
    def __init__(self, run: Callable[[int], str], time_limit: float, memory_headroom: int):
        to_child_r, to_child_w = os.pipe()
        to_parent_r, to_parent_w = os.pipe()
        limit = _vm_size() + memory_headroom
        pid = os.fork()
        if pid == 0:  # the child never returns into the caller
            code = 0
            try:
                os.close(to_child_w)
                os.close(to_parent_r)
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
                resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
                signal.signal(signal.SIGALRM, _on_alarm)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                while True:
                    msg = _recv(to_child_r)
                    if msg is None:
                        break
                    index = struct.unpack("<q", msg)[0]
                    try:
                        signal.setitimer(signal.ITIMER_REAL, time_limit)
                        verdict = run(index)
                    except CallTimeout:
                        verdict = "hang"
                    finally:
                        signal.setitimer(signal.ITIMER_REAL, 0)
                    _send(to_parent_w, verdict.encode())
            except BaseException:  # noqa: BLE001 - the child must never unwind into the caller
                code = 1
            finally:
                os._exit(code)
        os.close(to_child_r)
        os.close(to_parent_w)
        self.pid = pid
        self.to_child = to_child_w
        self.from_child = to_parent_r

    def close(self, kill: bool = False) -> int:
        """Stop the child (closing its pipe, or killing it); return its wait status."""
        if kill:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:  # pragma: no cover - already gone
                pass
        for fd in (self.to_child, self.from_child):
            try:
                os.close(fd)
            except OSError:  # pragma: no cover
                pass
        return os.waitpid(self.pid, 0)[1]


class Pool:
    """Run calls ``run(index)`` in a forked child with a time and a memory limit.

    Parameters
    ----------
    run : callable
        ``run(index) -> verdict``; executed in the child. It must not need anything the
        parent creates after the pool (the child sees the memory of the moment it was
        forked).
    time_limit : float
        Seconds per call; a call still running is reported as ``"hang"``.
    memory_headroom : int
        Bytes of address space a child may add to what the parent had when it forked.
    """

    def __init__(self, run: Callable[[int], str], *, time_limit: float, memory_headroom: int):
        self._run = run
        self.time_limit = time_limit
        self.memory_headroom = memory_headroom
        self._child: _Child | None = None

    def _fresh(self) -> _Child:
        if self._child is None:
            self._child = _Child(self._run, self.time_limit, self.memory_headroom)
        return self._child

    def call(self, index: int) -> str:
        """The verdict of call ``index``, or the cause of its child's death."""
        child = self._fresh()
        try:
            _send(child.to_child, struct.pack("<q", index))
        except BrokenPipeError:  # pragma: no cover - the child died between calls
            self._child = None
            child.close(kill=True)
            child = self._fresh()
            _send(child.to_child, struct.pack("<q", index))
        # the child's own timer fires first; the parent's deadline catches a hang in C code
        ready, _, _ = select.select([child.from_child], [], [], self.time_limit + 3.0)
        if not ready:
            self._child = None
            child.close(kill=True)
            return "hang"
        answer = _recv(child.from_child)
        if answer is not None:
            return answer.decode()
        self._child = None
        status = child.close(kill=True)
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            return "out of memory" if sig == signal.SIGKILL else f"crash ({signal.Signals(sig).name})"
        return f"crash (exit status {os.WEXITSTATUS(status)})"

    def map(self, indices: Sequence[int]) -> list[str]:
        """Verdicts of the calls ``indices``, in order."""
        return [self.call(i) for i in indices]

    def close(self) -> None:
        """Stop the child process, if any."""
        if self._child is not None:
            self._child.close()
            self._child = None

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
