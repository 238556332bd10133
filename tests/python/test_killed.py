"""A process killed while it holds tensors (open by path, viewed by numpy, held through
the queue): its references come back to the mount."""
import os
import signal
import subprocess
import sys
import textwrap

import numpy

import tensorfs
from conftest import wait_until

CHILD = textwrap.dedent("""
    import sys, time, numpy, tensorfs
    mount, url = sys.argv[1], sys.argv[2]
    a = tensorfs.open(mount + "/a", "r+")
    view = numpy.from_dlpack(a)               # an export: a second reference of its own
    b = tensorfs.connect(url).get("b")        # a hold recorded in Redis
    c = tensorfs.create(mount + "/c", "f32", [64])
    print("ready", flush=True)
    time.sleep(600)
""")


def test_killed_child_gives_references_back(mnt):
    for n in ("a", "b"):
        tensorfs.publish(mnt.path(n), numpy.arange(16, dtype=numpy.float32)).close()
    child = subprocess.Popen([sys.executable, "-c", CHILD, mnt.dir, mnt.url],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        assert wait_until(lambda: [mnt.refcount(n) for n in "abc"] == [2, 2, 2])
        assert any(k.startswith("holder:") for k in mnt.cli("hkeys", "tensorfs:tensor:b").split())
        os.kill(child.pid, signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    for n in ("a", "c"):
        assert wait_until(lambda: mnt.refcount(n) == 1), "open file of %s released" % n
    # The daemon reaps holds of dead pids every second.
    assert wait_until(lambda: mnt.refcount("b") == 1), "hold on b reaped"
    assert not any(k.startswith("holder:") for k in mnt.cli("hkeys", "tensorfs:tensor:b").split())
    with tensorfs.open(mnt.path("b")) as t:
        assert numpy.array_equal(numpy.from_dlpack(t), numpy.arange(16, dtype=numpy.float32))
