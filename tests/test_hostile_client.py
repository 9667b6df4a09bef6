"""Hostile `client=` values (issue 34, item 2): listeners that never speak or speak garbage, malformed addresses,
values of the wrong type. Each ends, within the documented bound (`sharded.CONNECT_SECONDS`), in one
RetrievalInputError naming `client`; on the command line, in one line of error and exit code 2."""
import asyncio
import io
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from retrieval_lit import sharded  # noqa: E402
from retrieval_lit.evaluation import evaluate  # noqa: E402
from retrieval_lit.validate import RetrievalInputError  # noqa: E402

MARGIN = 3.0      # seconds beyond the bound: thread start-up and a loaded machine's scheduling, not waiting

rng = np.random.default_rng(34)
QB, GB = rng.integers(0, 2, (4, 16)), rng.integers(0, 2, (30, 16))
QL, GL = rng.integers(0, 3, 4), rng.integers(0, 3, 30)


class Listener:
    """A TCP server on 127.0.0.1, port 0 (any free one), in a thread: it accepts every connection and sends `reply`
    on it (None: nothing, ever), then holds the connection, or closes it at once (`hang_up`). `peer_closed()`:
    whether every accepted connection has been closed by the other side."""

    def __init__(self, reply: bytes | None = None, hang_up: bool = False):
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.address = "tcp://127.0.0.1:%d" % self.server.getsockname()[1]
        self.reply, self.hang_up, self.held = reply, hang_up, []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:                      # closed by close()
                return
            if self.hang_up:
                conn.close()
                continue
            self.held.append(conn)
            if self.reply is not None:
                try:
                    conn.sendall(self.reply)
                except OSError:
                    pass

    def peer_closed(self, wait: float = 3.0) -> bool:
        "True if each accepted connection reads end-of-stream (the client side closed it) within `wait` seconds."
        for conn in self.held:
            conn.settimeout(wait)
            try:
                while conn.recv(65536):          # what the client sent (its handshake), then the end
                    pass
            except OSError:                      # a timeout: still open on the client's side (a reset counts too)
                if not isinstance(sys.exc_info()[1], ConnectionResetError):
                    return False
        return bool(self.held)

    def close(self):
        self.server.close()
        for conn in self.held:
            conn.close()


def free_port() -> int:
    "A port on 127.0.0.1 that nothing listens on (bound, then released)."
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def refused(f, bound: float) -> str:
    "f() must raise one RetrievalInputError naming `client`, within `bound` + MARGIN seconds: its message."
    t0 = time.monotonic()
    with pytest.raises(RetrievalInputError) as info:
        f()
    took = time.monotonic() - t0
    message = str(info.value)
    assert message.startswith("`client` "), message
    assert "\n" not in message, message
    assert took < bound + MARGIN, (took, message)
    return message


def run_evaluate(client):
    return evaluate(QB, GB, QL, GL, ["map"], client=client)


@pytest.fixture
def short_bound(monkeypatch):
    "CONNECT_SECONDS shortened to 1.5 s, so that waiting cases run quickly (the default is tested once, below)."
    monkeypatch.setattr(sharded, "CONNECT_SECONDS", 1.5)
    return 1.5


def test_silent_listener_ends_within_the_default_bound():
    "Accepts and never speaks: dask.distributed's Client waited forever (> 420 s); now CONNECT_SECONDS, then an error."
    bound = sharded.CONNECT_SECONDS
    assert bound == 10                                         # the documented limit
    server = Listener(None)
    try:
        t0 = time.monotonic()
        message = refused(lambda: run_evaluate(server.address), bound)
        assert time.monotonic() - t0 >= bound - 0.5            # it did wait for an answer, as long as promised
        assert f"{server.address!r} accepted the connection but did not answer as a Dask scheduler within 10 s" in message
        assert server.peer_closed()                            # our side of the connection was closed
    finally:
        server.close()


@pytest.mark.parametrize("reply", [b"\xff" * 64 + b"garbage\r\n" * 50,        # a huge frame count: ValueError inside
                                   b"\x01" + b"\x00" * 7 + b"\x05" + b"\x00" * 7 + b"abcde",   # one frame, not msgpack
                                   b"HTTP/1.1 400 Bad Request\r\n\r\n",       # another protocol's server
                                   b""],                                      # accepts, says nothing, never closes
                         ids=["frame-count", "not-msgpack", "http", "silent"])
def test_garbage_listener_is_refused_naming_client(reply, short_bound):
    server = Listener(reply if reply else None)
    try:
        message = refused(lambda: run_evaluate(server.address), short_bound)
        assert server.address in message and ("does not answer as a Dask scheduler" in message
                                              or "did not answer as a Dask scheduler" in message)
        assert server.peer_closed()
    finally:
        server.close()


def test_listener_that_closes_at_once_is_refused(short_bound):
    server = Listener(None, hang_up=True)
    try:
        message = refused(lambda: run_evaluate(server.address), short_bound)
        assert "does not answer as a Dask scheduler" in message, message
    finally:
        server.close()


def test_nothing_listening_is_refused_after_the_bound(short_bound):
    address = f"tcp://127.0.0.1:{free_port()}"
    message = refused(lambda: run_evaluate(address), short_bound)
    assert message.startswith(f"`client` cannot reach a Dask scheduler at {address!r} within 1.5 s (")
    assert "Connection refused" in message or "ConnectionRefusedError" in message


def dask_server_that_never_replies():
    """A dask.distributed comm listener in a thread of its own: it answers the handshake (it is a Dask server) but
    never replies to any request, so a Client connects and then waits. Returns (address, stop)."""
    started, box = threading.Event(), {}

    async def main():
        async def handle(comm):
            await asyncio.sleep(3600)
        listener = distributed.comm.listen("tcp://127.0.0.1:0", handle)
        await listener.start()
        box["address"], box["stop"] = listener.contact_address, asyncio.Event()
        box["loop"] = asyncio.get_running_loop()
        started.set()
        await box["stop"].wait()
        listener.stop()

    threading.Thread(target=lambda: asyncio.run(main()), daemon=True).start()
    assert started.wait(10)
    return box["address"], lambda: box["loop"].call_soon_threadsafe(box["stop"].set)


def test_dask_server_that_never_registers_the_client(short_bound):
    "The handshake is answered, the Client's requests are not: refused within the same bound, from the Client's step."
    address, stop = dask_server_that_never_replies()
    try:
        message = refused(lambda: run_evaluate(address), short_bound)
        assert message.startswith(f"`client` the Dask scheduler at {address!r} answered but no client could start "
                                  "within 1.5 s"), message
    finally:
        stop()


@pytest.mark.parametrize("address, says", [
    ("tcp://127.0.0.1:notaport", "'tcp://127.0.0.1:notaport' has the port 'notaport': a port is a whole number"),
    ("ftp://127.0.0.1:21", "'ftp://127.0.0.1:21' has the scheme 'ftp', which dask.distributed cannot connect"),
    ("", "is an empty address"),
    ("   ", "is an empty address"),
    ("tcp://127.0.0.1:0", "has the port '0'"),
    ("127.0.0.1:70000", "has the port '70000'"),
    ("tcp://127.0.0.1", "is not of the form tcp://host:port"),
    ("tcp://:8786", "is not of the form tcp://host:port"),
    ("tcp://127.0.0.1:8786/path", "has the port '8786/path'"),
    ("tcp://127.0.0.1:+8786", "has the port '+8786'"),
    ("tcp://127.0.0.1:８７８６", "has the port"),                  # full-width digits are not a port
    ("tcp://127.0.0.1:8786\n", "holds white space"),
])
def test_malformed_address_is_refused_before_connecting(address, says):
    message = refused(lambda: run_evaluate(address), 0.0)          # no waiting at all: nothing connects
    assert says in message, message


@pytest.mark.parametrize("value, shown", [(5, "int 5"), (True, "bool True"), (False, "bool False"),
                                          (["tcp://127.0.0.1:8786"], "list ['tcp://127.0.0.1:8786']"),
                                          (b"tcp://127.0.0.1:8786", "bytes b'tcp://127.0.0.1:8786'"),
                                          (3.5, "float 3.5"), (object(), "object <object object at")])
def test_wrong_type_is_refused_naming_client(value, shown):
    for f in (lambda: run_evaluate(value),
              lambda: sharded.sharded_scan(QB, [GB], QL, [GL], client=value),
              lambda: sharded.scatter_gallery(GB, GL, client=value)):
        message = refused(f, 0.0)
        assert message.startswith("`client` must be a dask.distributed.Client, a scheduler address"), message
        assert f"got {shown}" in message, message


def test_a_cluster_object_is_refused_with_a_hint():
    class FakeCluster:                       # what LocalCluster and the deploy clusters have; no Client methods
        scheduler_address = "tcp://127.0.0.1:8786"
    message = refused(lambda: run_evaluate(FakeCluster()), 0.0)
    assert "got FakeCluster" in message and "pass distributed.Client(cluster)" in message


def test_a_closed_client_is_refused():
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        c = distributed.Client(cluster, set_as_default=False)
        c.close()
        message = refused(lambda: run_evaluate(c), 0.0)
        assert "is closed" in message


def test_an_address_still_works_and_its_client_is_closed_after():
    "The good path through the same code: a TCP scheduler's address, the single-process values, no client left open."
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://",
                                  dashboard_address=None) as cluster:
        before = set(distributed.Client._instances)
        here = evaluate(QB, GB, QL, GL, ["map", "p@5"], ties="index", engine="numpy")
        for address in (cluster.scheduler_address, cluster.scheduler_address.replace("tcp://", "")):
            there = evaluate(QB, GB, QL, GL, ["map", "p@5"], ties="index", client=address)
            assert there["map"] == here["map"] and there["p@5"] == here["p@5"]
            scan = sharded.sharded_scan(QB, [GB[:12], GB[12:]], QL, [GL[:12], GL[12:]], client=address)
            assert scan.summary.hist.sum() == len(QB) * len(GB)
        opened = [c for c in set(distributed.Client._instances) - before if c.status not in ("closed", "closing")]
        assert not opened, opened
        assert not any(t.name.startswith("retrieval_lit:") for t in threading.enumerate())


# the command line: one line of error, exit code 2, no traceback

def npy_args(tmp_path) -> list:
    args = []
    for name, a in dict(query_codes=QB, gallery_codes=GB, query_labels=QL, gallery_labels=GL).items():
        np.save(tmp_path / f"{name}.npy", a)
        args += ["--" + name.replace("_", "-"), str(tmp_path / f"{name}.npy")]
    return args + ["--metrics", "map"]


def cli(*argv):
    entry = "import sys; from retrieval_lit.cli import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", entry, *argv], capture_output=True, text=True, timeout=120)


def assert_one_line_error(code: int, err: str, says: str):
    assert code == 2, (code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err                               # one line: no traceback, no log records
    assert lines[0].startswith("retrieval-lit: error: `client` ") and says in lines[0], lines[0]


@pytest.mark.parametrize("address, says", [("tcp://127.0.0.1:notaport", "has the port 'notaport'"),
                                           ("ftp://127.0.0.1:21", "has the scheme 'ftp'"),
                                           ("", "is an empty address")])
def test_command_line_malformed_address_is_one_line(tmp_path, address, says):
    p = cli("evaluate", *npy_args(tmp_path), "--dask", address)
    assert p.stdout == ""
    assert_one_line_error(p.returncode, p.stderr, says)


def test_command_line_garbage_listener_is_one_line(tmp_path):
    server = Listener(b"\xff" * 64)
    try:
        t0 = time.monotonic()
        p = cli("evaluate", *npy_args(tmp_path), "--dask", server.address)
        assert time.monotonic() - t0 < sharded.CONNECT_SECONDS + 10     # with the interpreter's start-up
        assert_one_line_error(p.returncode, p.stderr, "does not answer as a Dask scheduler")
    finally:
        server.close()


def test_command_line_silent_listener_is_one_line(tmp_path, short_bound, capsys):
    "In process (the bound shortened): main() returns 2 after the bound, with one line on stderr."
    from retrieval_lit.cli import main
    server = Listener(None)
    try:
        t0 = time.monotonic()
        code = main(["evaluate", *npy_args(tmp_path), "--dask", server.address], out=io.StringIO())
        assert time.monotonic() - t0 < short_bound + MARGIN
        assert_one_line_error(code, capsys.readouterr().err, "did not answer as a Dask scheduler within 1.5 s")
    finally:
        server.close()
