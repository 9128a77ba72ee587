"""A local Ray (2 CPUs) with Serve on a loopback port of the test's own, and the engine deployed:
the cluster fixture of the Ray test modules (each runs in a pytest process of its own)."""
from __future__ import annotations

import os
import socket


def free_port() -> int:
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        return so.getsockname()[1]


def serve_cluster(tmp_path_factory, name: str, capacity: int):
    """Generator for a module fixture: two replicas of half a CPU; the handle has ``.port`` and ``.url``."""
    import ray
    from ray import serve

    from bridge.cluster.replica import build

    port = free_port()
    os.environ["RAY_worker_niceness"] = "0"      # Ray's default 15 starves the replicas under load
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             _temp_dir=str(tmp_path_factory.mktemp("ray")))
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    handle = serve.run(build("synth", replicas=2, capacity=capacity, num_cpus=0.5), name=name, route_prefix="/")
    handle.port, handle.url = port, f"http://127.0.0.1:{port}"
    try:
        yield handle
    finally:
        serve.shutdown()
        ray.shutdown()
