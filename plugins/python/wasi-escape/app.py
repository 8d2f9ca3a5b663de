"""wasi-escape: a hostile test plugin that tries to leave its sandbox.

A working analysis -- it counts the kernel dispatches it receives -- that,
in `init` and again in its first `deliver_batch`, tries everything a WASI
guest could try to reach the machine it runs on:

| attempt | what it does |
|---|---|
| `read /etc/passwd` | `open("/etc/passwd").read()` |
| `read <read>` | reads the config's `read` file (relative: the run's current directory) |
| `read <read_abs>` | the same with an absolute path, when given |
| `list /` | `os.listdir("/")` |
| `list .` | `os.listdir(".")` (the run's current directory, were it preopened) |
| `write <write>` | `open(name, "w")` and writes a line (default `escape-probe.txt`) |
| `write <write_abs>` | the same with an absolute path, when given |
| `environ` | `os.environ`: the host's environment, were it passed through |
| `connect` | a TCP `socket.connect((host, port))` to the config's `connect` address |
| `create_connection` | `socket.create_connection((host, port))`: a name lookup, then TCP |
| `udp` | `sendto` of one datagram to the same address |
| `resolve localhost` | `socket.getaddrinfo("localhost", port)`: a DNS lookup |

(Host names are passed to `getaddrinfo` as bytes: for a `str`, CPython
encodes them with the `idna` codec, which componentize-py's interpreter
lacks, and the attempt would fail in Python before it reached the host.)

The host links a deny-all WASI context (no preopened directory, no
network, no environment), so every attempt must fail. Each is wrapped: the
plugin survives and records what happened, `denied: <exception>` (an
`OSError`, which includes socket errors, or an empty environment) or
`SUCCEEDED: <what it got>`; anything else (a bug here, a missing module)
is `error: <exception>`, which a test must not mistake for a denial.

Chain stage::

    [[stage]]
    name = "escape"
    plugin = "wasi-escape"
    domains = ["kernel_dispatch"]
    output = true      # for its two CSV files, through the host's output interface
    config = { connect = "127.0.0.1:4000", read = "chain.toml" }

Config keys: `connect` (`host:port`, default `127.0.0.1:9`), `read`
(default `chain.toml`), `read_abs`, `write` (default `escape-probe.txt`),
`write_abs`, and `uncaught` / `uncaught_in`: the attempt named by
`uncaught` (e.g. `connect`, `read /etc/passwd`) is not caught when made in
`uncaught_in` (`init` or `deliver-batch`, the default): its exception
escapes the export and traps the instance, as a careless plugin would.

Outputs (when the stage has an output grant): `escape_attempts.csv`
(`Where,Attempt,Outcome`) and `escape_records.csv` (`Kind,Count`); the
same two tables are `fini`'s summary.
"""

import os
import socket

import rocwasm


def _outcome_of_error(e):
    """How an attempt that raised `e` is recorded."""
    if isinstance(e, OSError):
        return f"denied: {type(e).__name__}: {e}"
    return f"error: {type(e).__name__}: {e}"


class WasiEscape(rocwasm.AnalysisPlugin):
    def __init__(self):
        self.attempts = rocwasm.Table("Escape attempts", ["Where", "Attempt", "Outcome"])
        self.dispatches = 0
        self.batches = 0

    def init(self):
        host, _, port = rocwasm.config_get("connect", "127.0.0.1:9").rpartition(":")
        self.address = (host, int(port))
        self.read = rocwasm.config_get("read", "chain.toml")
        self.read_abs = rocwasm.config_get("read_abs", "")
        self.write = rocwasm.config_get("write", "escape-probe.txt")
        self.write_abs = rocwasm.config_get("write_abs", "")
        self.uncaught = rocwasm.config_get("uncaught", "")
        self.uncaught_in = rocwasm.config_get("uncaught_in", "deliver-batch")
        rocwasm.select("kernel_dispatches", "correlation_id")
        self._escape("init")

    def deliver_batch(self, info, batch):
        if self.batches == 0:
            self._escape("deliver-batch")
        self.batches += 1
        self.dispatches += rocwasm.row_count(batch.kernel_dispatches)

    def fini(self):
        records = rocwasm.Table("Escape plugin records", ["Kind", "Count"])
        records.row("kernel-dispatches", self.dispatches)
        records.row("batches", self.batches)
        for name, table in (("escape_attempts.csv", self.attempts), ("escape_records.csv", records)):
            refused = rocwasm.write_file(name, table.csv())
            if refused is not None:
                rocwasm.info(f"wasi-escape: {name} not written: {refused}")
        return [self.attempts, records]

    # The attempts. Each returns a short description of what it obtained;
    # reaching the return means the sandbox let it through.

    def _escape(self, where):
        attempts = [
            ("read /etc/passwd", lambda: self._read("/etc/passwd")),
            (f"read {self.read}", lambda: self._read(self.read)),
            ("list /", lambda: self._list("/")),
            ("list .", lambda: self._list(".")),
            (f"write {self.write}", lambda: self._write(self.write)),
            ("environ", self._environ),
            ("connect", self._connect),
            ("create_connection", self._create_connection),
            ("udp", self._udp),
            ("resolve localhost", self._resolve),
        ]
        if self.read_abs:
            attempts.append((f"read {self.read_abs}", lambda: self._read(self.read_abs)))
        if self.write_abs:
            attempts.append((f"write {self.write_abs}", lambda: self._write(self.write_abs)))
        for name, attempt in attempts:
            if name == self.uncaught and where == self.uncaught_in:
                rocwasm.warn(f"wasi-escape: {name} in {where}, uncaught")
                attempt()  # an exception escapes the export: the instance traps
                outcome = "SUCCEEDED: uncaught attempt returned"
            else:
                try:
                    outcome = attempt()
                except Exception as e:  # noqa: BLE001 -- recording every failure is the point
                    outcome = _outcome_of_error(e)
            self.attempts.row(where, name, outcome)

    def _read(self, path):
        with open(path) as f:
            return f"SUCCEEDED: read {len(f.read())} characters"

    def _list(self, path):
        return f"SUCCEEDED: {len(os.listdir(path))} entries"

    def _write(self, path):
        with open(path, "w") as f:
            f.write("written by the wasi-escape test plugin\n")
        return "SUCCEEDED: file written"

    def _environ(self):
        env = dict(os.environ)
        if not env:
            return "denied: empty environment"
        return f"SUCCEEDED: {len(env)} variables ({', '.join(sorted(env)[:5])})"

    def _connect(self):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(1)
            s.connect(self.address)
            return f"SUCCEEDED: connected to {self.address[0]}:{self.address[1]}"

    def _create_connection(self):
        host, port = self.address
        with socket.create_connection((host.encode(), port), timeout=1):
            return f"SUCCEEDED: connected to {host}:{port}"

    def _udp(self):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(b"wasi-escape", self.address)
            return f"SUCCEEDED: datagram sent to {self.address[0]}:{self.address[1]}"

    def _resolve(self):
        found = socket.getaddrinfo(b"localhost", self.address[1])
        return f"SUCCEEDED: {len(found)} address(es)"


Lifecycle, Analysis = rocwasm.export_analysis(WasiEscape)
