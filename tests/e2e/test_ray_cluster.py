"""The Ray executor on a real 2-node Ray cluster on loopback (``ray.cluster_utils.Cluster``).

An HTTP provider runs from Ray actors (``ray: {actors: 2}``), one per node (SPREAD), in
front of the fake OpenAI-compatible server: calls are served on both nodes (``served_by``
names each node), and the worker node is killed (SIGKILL of its processes, by PID) once the
run has recorded some answers: every cell is still answered, and recorded once.

When every actor is lost for good (killed without restart), the run stops ``failed``,
keeps what it recorded, and a resumed run finishes it: each cell recorded once.

Every Ray process carries a marker in its environment; teardown stops the cluster by its
recorded PIDs (never ``ray stop``) and then checks, with ``ps``, that none is left.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import qualspec
from qualspec.errors import ProviderError
from qualspec.store import Store
from qualspec.testing import FakeServer

# the cluster's tests on one pytest-xdist worker, one at a time (they share the module's
# cluster, and a second cluster starting beside it would only slow both down)
pytestmark = pytest.mark.xdist_group("ray-cluster")

CELLS = 40
START_ATTEMPTS = 3  # Ray gives each node's raylet 30 s to register (not settable): retried
OPTIONS = qualspec.ExecuteOptions(judge=False, use_cache=False)
SUITE = """
name: %(name)s
providers:
  fake:
    type: openai
    base_url: %(url)s
    max_concurrency: 2
    timeout: 120
    ray: {actors: 2, num_cpus: 1}
candidates:
  - {name: a, model: fake/model-a}
scenarios:
  - name: echo
    prompt: "Say {{ i }}"
    inputs: %(inputs)s
"""


def _as_ray_init_leaves_it() -> None:
    """What a local ``ray.init()`` leaves on a machine, which ``cluster_utils.Cluster``
    needs but does not make itself (on a fresh machine, where no test started a local Ray
    before this module, it failed without them):

    - a token (``RAY_AUTH_MODE=token``) in ~/.ray/auth_token: without one the head's GCS
      server stops at once, and the head waits for its port until it times out;
    - Ray's temp folder (/tmp/ray), where the head writes the cluster's address."""
    path = Path.home() / ".ray" / "auth_token"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_hex(32))  # as ray.init() makes it
        path.chmod(0o600)
    Path(tempfile.gettempdir(), "ray").mkdir(exist_ok=True)


def _marked(marker: str) -> list[int]:
    """PIDs (besides this process) whose environment holds ``marker`` (found with ps)."""
    out = subprocess.run(
        ["ps", "-e", "-o", "pid="], capture_output=True, text=True, check=True
    ).stdout
    found = []
    for pid in (int(p) for p in out.split()):
        if pid == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if marker.encode() in environ:
            found.append(pid)
    return found


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[Any, Any]]:
    """A head and a worker node (2 CPUs each) on 127.0.0.1, for the module's tests (the
    first removes the worker node; the second needs only the head); (cluster, worker)."""
    marker = f"QUALSPEC_RAY_TEST={uuid.uuid4().hex}"
    name, value = marker.split("=")
    with pytest.MonkeyPatch.context() as env:
        env.setenv(name, value)
        env.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        env.setenv("RAY_AUTH_MODE", "token")
        env.delenv("RAY_ADDRESS", raising=False)
        _as_ray_init_leaves_it()
        from ray.cluster_utils import Cluster  # after the settings: Ray reads them on import

        env.setenv("RAY_gcs_server_port_wait_time_s", "300")  # a loaded 2-core machine
        temp = tempfile.mkdtemp(prefix="qsray", dir="/tmp")  # short: Unix socket paths
        args = {"num_cpus": 2, "temp_dir": temp}
        started = Cluster(initialize_head=False, shutdown_at_exit=False)
        try:
            for attempt in range(1, START_ATTEMPTS + 1):
                try:
                    # wait=False: no 30 s limit on a node showing up; wait_for_nodes' instead
                    started.add_node(**args, include_dashboard=False, wait=False)
                    worker = started.add_node(**args, wait=False)
                    started.wait_for_nodes(timeout=300)
                    break
                except Exception:
                    started.shutdown()  # what did start, by its recorded PIDs
                    for pid in _marked(marker):  # a node that failed to start: its own, by PID
                        os.kill(pid, signal.SIGKILL)
                    if attempt == START_ATTEMPTS:
                        raise
                    started = Cluster(initialize_head=False, shutdown_at_exit=False)
            yield started, worker
        finally:
            started.shutdown()  # every node's processes, killed by their recorded PIDs
            left = _marked(marker)
            deadline = time.monotonic() + 60
            while left and time.monotonic() < deadline:  # workers exit after their raylet
                time.sleep(0.5)
                left = _marked(marker)
            for pid in left:  # not ours to leave behind: stopped by PID, then reported
                os.kill(pid, signal.SIGKILL)
            shutil.rmtree(temp, ignore_errors=True)
            assert not left, f"Ray processes left after the cluster stopped: {left}"


def _answered(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            row = conn.execute("SELECT count(*) FROM responses WHERE error IS NULL").fetchone()
    except sqlite3.Error:  # not created yet
        return 0
    return int(row[0])


@pytest.mark.timeout(900)
def test_calls_run_on_both_nodes_and_a_lost_node_loses_nothing(
    cluster: tuple[Any, Any], tmp_path: Path
) -> None:
    started, worker = cluster
    worker_id = worker.node_id
    head_id = started.head_node.node_id
    inputs = [{"id": f"r{i:03d}", "i": f"{i:03d}"} for i in range(CELLS)]
    with FakeServer(latency=0.3, log_requests=False) as server:
        suite = tmp_path / "suite.yaml"
        suite.write_text(SUITE % {"name": "ray-cluster", "url": server.base_url, "inputs": inputs})
        db = tmp_path / "q.db"
        killed: dict[str, int] = {}

        async def kill_worker_mid_run() -> None:
            deadline = time.monotonic() + 600
            while await asyncio.to_thread(_answered, db) < 6:
                assert time.monotonic() < deadline, "the run recorded no answers"
                await asyncio.sleep(0.05)
            killed["at"] = await asyncio.to_thread(_answered, db)
            # SIGKILL of the node's raylet, workers and agents, by their PIDs
            await asyncio.to_thread(started.remove_node, worker, False)

        async def main() -> qualspec.RunOutcome:
            async with qualspec.Session(
                db=f"sqlite:///{db}", options=OPTIONS, executor="ray", ray_address=started.address
            ) as session:
                async with asyncio.TaskGroup() as tasks:
                    run = tasks.create_task(session.run(suite))
                    tasks.create_task(kill_worker_mid_run())
                return run.result()

        outcome = asyncio.run(main())
        calls = server.calls
    assert killed["at"] < CELLS  # mid-run: cells were still to answer
    assert outcome.status == "finished"
    responses = outcome.record.responses
    assert len(responses) == CELLS
    assert len({r.key for r in responses}) == CELLS  # each cell recorded once
    assert [r.error for r in responses] == [None] * CELLS
    assert sorted(r.text for r in responses) == sorted(
        f"Answer to: Say {i:03d}" for i in range(CELLS)
    )
    served = {r.served_by for r in responses}
    assert f"ray:{worker_id}" in served and f"ray:{head_id}" in served, served
    assert served <= {f"ray:{worker_id}", f"ray:{head_id}"}
    # the worker node's actor served nothing after it was killed: the rest, on the head
    assert sum(r.served_by == f"ray:{worker_id}" for r in responses) <= killed["at"] + 2
    # at most the calls in flight on the lost node (2 per actor) were made twice
    assert CELLS <= calls <= CELLS + 2
    with sqlite3.connect(db) as conn:
        twice = conn.execute(
            "SELECT key FROM responses GROUP BY run_id, key HAVING count(*) > 1"
        ).fetchall()
    assert twice == []


@pytest.mark.timeout(900)
def test_a_run_with_no_actor_left_ends_failed_and_resumes(
    cluster: tuple[Any, Any], tmp_path: Path
) -> None:
    import ray

    started, _worker = cluster  # the worker node may be gone (the test above)
    inputs = [{"id": f"r{i:03d}", "i": f"{i:03d}"} for i in range(CELLS)]
    with FakeServer(latency=0.3, log_requests=False) as server:
        suite = tmp_path / "suite.yaml"
        suite.write_text(SUITE % {"name": "ray-lost", "url": server.base_url, "inputs": inputs})
        db = tmp_path / "q.db"
        killed: dict[str, int] = {}

        async def kill_every_actor() -> None:
            deadline = time.monotonic() + 600
            while await asyncio.to_thread(_answered, db) < 6:
                assert time.monotonic() < deadline, "the run recorded no answers"
                await asyncio.sleep(0.05)
            killed["at"] = await asyncio.to_thread(_answered, db)
            names = [n for n in ray.util.list_named_actors() if n.startswith("qualspec:fake:")]
            assert len(names) == 2, names
            for name in names:  # gone for good: Ray does not restart them
                ray.kill(ray.get_actor(name), no_restart=True)

        async def first() -> str:
            async with qualspec.Session(
                db=f"sqlite:///{db}", options=OPTIONS, executor="ray", ray_address=started.address
            ) as session:
                async with asyncio.TaskGroup() as tasks:
                    tasks.create_task(kill_every_actor())
                    with pytest.raises(ProviderError) as stopped:
                        await session.run(suite)
            return str(stopped.value)

        message = asyncio.run(first())
        assert "every Ray actor of provider 'fake' was lost" in message, message
        assert "--resume" in message, message
        with Store.open(f"sqlite:///{db}") as store:
            (summary,) = store.list_runs(limit=5)
        assert summary.status == "failed"
        assert killed["at"] < CELLS

        async def resumed() -> qualspec.RunOutcome:
            async with qualspec.Session(
                db=f"sqlite:///{db}", options=OPTIONS, executor="ray", ray_address=started.address
            ) as session:
                return await session.run(suite, resume=summary.id)

        outcome = asyncio.run(resumed())
    assert outcome.status == "finished" and outcome.run_id == summary.id
    responses = outcome.record.responses
    assert len(responses) == CELLS and len({r.key for r in responses}) == CELLS
    assert [r.error for r in responses] == [None] * CELLS
    with sqlite3.connect(db) as conn:
        twice = conn.execute(
            "SELECT key FROM responses GROUP BY run_id, key HAVING count(*) > 1"
        ).fetchall()
    assert twice == []
