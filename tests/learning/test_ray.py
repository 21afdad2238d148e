"""DMC training on Ray (backend: ray) across a real two-node local cluster (Ray's own cluster utilities).

Runs in the RLlib venv (`make test` runs it there: Ray pins its own gymnasium); skipped where
Ray is not installed."""
import json

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'ddz-env[ray]'; make setup-rllib)")

from ray.cluster_utils import Cluster  # noqa: E402

from agents.dmc.learner import sources  # noqa: E402
from agents.dmc.config import load_config  # noqa: E402
from agents.dmc.learner.trainer import load_checkpoint, train  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.rllib]


@pytest.fixture(scope="module")
def cluster():
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    c.add_node(num_cpus=1)
    c.wait_for_nodes()
    ray.init(address=c.address, log_to_driver=False, configure_logging=False)
    yield c
    ray.shutdown()
    c.shutdown()


def test_two_nodes_train_survive_a_killed_actor_and_checkpoint(cluster, tmp_path, monkeypatch):
    assert len([n for n in ray.nodes() if n["Alive"]]) == 2
    killed = {}
    get = sources.RaySource.get

    def get_and_kill_once(self):  # fault injection: kill actor 0 once both actors have sent batches
        out = get(self)
        if not killed and self.info[0]["batches"] >= 1 and self.info[1]["batches"] >= 1:
            killed["actor"] = self.actors[0]
            ray.kill(self.actors[0], no_restart=True)
        elif killed and "replacement" not in killed and self.actors[0] is not killed["actor"]:
            # The learner does not wait for a replacement (it trains on the other actors'
            # batches); the test does, so that the replacement surely has batches to send
            # before the run ends, however slow this machine starts a worker.
            killed["replacement"] = ray.get(self.actors[0].where.remote(), timeout=300)
        return out

    monkeypatch.setattr(sources.RaySource, "get", get_and_kill_once)
    cfg = load_config("smoke", {"eval_every": 0, "backend": "ray", "num_actors": 2, "num_envs": 16, "batch_size": 256,
                                "total_frames": 256 * 60, "checkpoint_every": 256 * 10, "log_every_frames": 256 * 10,
                                "ray_address": cluster.address, "name": "ray-test"})
    run = tmp_path / "run"
    path = train(cfg, run, progress=False)
    info = json.loads((run / "actors.json").read_text())
    nodes = {a["node"] for a in info["actors"] if a["batches"] > 0}
    assert len(nodes) == 2, info  # batches came from actors on both nodes
    assert killed and info["restarts"] >= 1 and info["actors"][0]["restarts"] >= 1, info
    assert info["actors"][0]["batches_current"] >= 1, info  # the replacement actor delivered too
    assert info["version"] >= 20  # the learner published new weights at every update (sync_every 1)...
    assert all(a["version"] >= 6 for a in info["actors"]), info  # ...and the actors acted with recent ones
    ck = load_checkpoint(path)
    assert ck["frames"] == 256 * 60 and ck["config"]["backend"] == "ray"
    rows = (run / "log.csv").read_text().splitlines()
    assert len(rows) >= 3  # the header and rows at 2560, 5120, 7680 frames
