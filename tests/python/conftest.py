"""Fixtures of the Python tests: each test gets its own redis-server (unix socket, no
disk) and its own tensorfs mount on the host backend, as tests/integration/lib.sh makes
them. Results are also printed as "ok - " / "not ok - " / "skip - " lines, which
tests/tally.sh counts into the suite's total.

Environment: TFS_BUILD (default build) is the build folder whose tensorfs daemon runs;
TFS_BACKEND (default host) its --backend; with TFS_TEST_MEMORY=vmm a cuda mount runs
--memory vmm (tests/gpu/run.sh's GPU_MEMORY=vmm) unless the test names a memory mode.
"""
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("TFS_BUILD", "build")
DAEMON = os.path.join(ROOT, BUILD, "tensorfs")
TEST_TIMEOUT = 120


def wait_until(pred, timeout=20.0, step=0.02):
    """Polls pred() until it is true (20 s at most: what holds on a loaded machine);
    returns its last value."""
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v or time.monotonic() > end:
            return v
        time.sleep(step)


class Mount:
    """One redis-server and one tensorfs daemon. Attributes: dir (the mountpoint), url,
    sock, tmp, log."""

    def __init__(self, tmp, options=()):
        self.tmp = tmp
        self.sock = os.path.join(tmp, "redis.sock")
        self.url = "unix://" + self.sock
        self.dir = os.path.join(tmp, "m")
        self.log = os.path.join(tmp, "m.log")
        self.redis = None
        self.daemon = None
        self.options = list(options)

    def start(self):
        self.redis = subprocess.Popen(
            ["redis-server", "--port", "0", "--unixsocket", self.sock, "--save", "",
             "--appendonly", "no", "--dir", self.tmp, "--logfile",
             os.path.join(self.tmp, "redis.log"), "--daemonize", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not wait_until(lambda: self.cli("ping").strip() == "PONG", 20):
            raise RuntimeError("redis-server did not start")
        os.mkdir(self.dir)
        backend = os.environ.get("TFS_BACKEND", "host")
        memory = []
        if backend == "cuda" and os.environ.get("TFS_TEST_MEMORY") == "vmm" and \
                not any(o.startswith("--memory") or "memory=" in o for o in self.options):
            memory = ["--memory", "vmm"]
        self.daemon = subprocess.Popen(
            [DAEMON, "-f", "--redis", self.url, "--log", self.log, "--backend", backend]
            + memory + self.options + [self.dir], stdin=subprocess.DEVNULL)
        if not wait_until(lambda: os.path.ismount(self.dir) or self.daemon.poll() is not None, 120) \
                or not os.path.ismount(self.dir):
            with open(self.log, errors="replace") as f:
                raise RuntimeError("mount failed:\n" + f.read())
        return self

    def cli(self, *args):
        """redis-cli's output for a command (after the mount's records are flushed)."""
        if self.daemon is not None and os.path.ismount(self.dir):
            subprocess.run(["sync", self.dir], stderr=subprocess.DEVNULL)
        r = subprocess.run(["redis-cli", "-s", self.sock] + list(args), capture_output=True,
                           text=True)
        return r.stdout

    def path(self, name):
        return os.path.join(self.dir, name)

    def refcount(self, name):
        return int(os.getxattr(self.path(name), "user.tensor.refcount"))

    def stop(self):
        """Unmounts; returns a list of problems (a busy mount, a daemon exit status)."""
        problems = []
        if self.daemon is not None:
            ok = False
            for _ in range(50):
                if subprocess.run(["fusermount3", "-u", self.dir],
                                  stderr=subprocess.DEVNULL).returncode == 0:
                    ok = True
                    break
                time.sleep(0.2)
            if not ok:
                problems.append("unmount: busy")
                subprocess.run(["fusermount3", "-uz", self.dir], stderr=subprocess.DEVNULL)
            try:
                rc = self.daemon.wait(20)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                rc = self.daemon.wait()
            if rc != 0:
                with open(self.log, errors="replace") as f:
                    tail = "".join(f.readlines()[-20:])
                problems.append("daemon exited %d:\n%s" % (rc, tail))
        if self.redis is not None:
            self.redis.terminate()
            try:
                self.redis.wait(10)
            except subprocess.TimeoutExpired:
                self.redis.kill()
                self.redis.wait()
        return problems


@pytest.fixture
def mount_factory():
    """mount_factory(*daemon_options) -> a started Mount; all are stopped after the test."""
    made = []

    def make(*options):
        tmp = tempfile.mkdtemp(prefix="tfs-py.")
        m = Mount(tmp, options)
        made.append(m)
        return m.start()

    yield make
    problems = []
    for m in made:
        problems += m.stop()
    if problems:
        pytest.fail("; ".join(problems), pytrace=False)
    for m in made:
        shutil.rmtree(m.tmp, ignore_errors=True)


@pytest.fixture
def mnt(mount_factory):
    """A fresh redis-server + tensorfs mount for this test."""
    return mount_factory()


@pytest.fixture(autouse=True)
def _timeout():
    """A test that hangs fails after TEST_TIMEOUT seconds instead of stalling the suite."""
    def expire(signum, frame):
        raise TimeoutError("test ran over %d s" % TEST_TIMEOUT)
    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(TEST_TIMEOUT)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def pytest_runtest_logreport(report):
    name = "python/" + report.nodeid.split("/")[-1]
    line = None
    if report.when == "call":
        if report.passed:
            line = "ok - " + name
        elif report.failed:
            line = "not ok - " + name
    if report.skipped:
        why = report.longrepr[2] if isinstance(report.longrepr, tuple) else "skipped"
        line = "skip - %s: %s" % (name, why)
    elif report.failed and report.when != "call":
        line = "not ok - %s (%s)" % (name, report.when)
    if line and _config is not None:
        tr = _config.pluginmanager.getplugin("terminalreporter")
        if tr is not None:
            tr.write("\n" + line + "\n", flush=True)


_config = None


def pytest_configure(config):
    global _config
    _config = config


def pytest_collectreport(report):
    """A module skipped or broken at import shows as a line too."""
    if report.outcome == "passed" or _config is None:
        return
    tr = _config.pluginmanager.getplugin("terminalreporter")
    name = "python/" + report.nodeid.split("/")[-1]
    if report.skipped:
        why = report.longrepr[2] if isinstance(report.longrepr, tuple) else "skipped"
        tr.write("\nskip - %s: %s\n" % (name, why), flush=True)
    else:
        tr.write("\nnot ok - %s (collection)\n" % name, flush=True)
