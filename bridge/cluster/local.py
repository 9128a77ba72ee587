"""``wavebridge cluster up|status|down``: the engine deployment on this machine, for one studio box.

``up`` starts a Ray head of its own (``ray start --head --block`` as a child in a session of its
own, on the ports given or free ones, worker niceness 0 — Ray's default of 15 lets any other
process starve the replicas), deploys :func:`bridge.cluster.replica.build` as the application
``wavebridge`` behind Serve's HTTP proxy, waits until every replica is warm, and prints the two
``--engine`` addresses a daemon can use. What it started is written to ``cluster.json`` in the
state directory (0600), so that ``status`` and ``down`` find this cluster and nothing else: ``down``
shuts Serve down and ends that head's process group — never another Ray on the machine (it does
not run ``ray stop``, which stops every Ray of the user).

A cluster of several machines is started the Ray way (``ray start --head`` here, ``ray start
--address …`` on each node, ``serve deploy`` with the config in docs/SCALE.md); ``status`` works
on it too with ``--address``. ``[control]``
"""
from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time

from plugin_stub.protocol import pid_alive

STATE_FILE = "cluster.json"
APP = "wavebridge"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _state_path(state_dir: str | None) -> str:
    from bridge.web.store import default_state_dir, private_dir

    return os.path.join(private_dir(state_dir or default_state_dir()), STATE_FILE)


def _read_state(state_dir: str | None) -> dict | None:
    path = _state_path(state_dir)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not os.path.isfile(path) or os.path.islink(path) or st.st_uid != os.getuid():
        raise PermissionError(f"{path} is not a plain file of this user: not read")
    with open(path) as f:
        return json.load(f)


def _write_state(state_dir: str | None, state: dict) -> str:
    path = _state_path(state_dir)
    fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(state, f, indent=1)
    os.replace(path + ".tmp", path)
    return path


def _use_token(path: str | None) -> None:
    """Ray's token authentication with this cluster's token (``RAY_AUTH_TOKEN_PATH``)."""
    if path:
        os.environ["RAY_AUTH_MODE"] = "token"
        os.environ["RAY_AUTH_TOKEN_PATH"] = path


def _ray_bin() -> str:
    here = os.path.join(os.path.dirname(sys.executable), "ray")
    return here if os.path.exists(here) else (shutil.which("ray") or "ray")


def _connect(address: str, timeout: float = 60.0):
    """This process as a driver of the cluster at ``address`` (``HOST:PORT``); TimeoutError after
    ``timeout`` s (Ray itself retries for minutes)."""
    import ray

    if not ray.is_initialized():
        def late(*_):
            raise TimeoutError(f"no answer from the Ray cluster at {address} in {timeout:g} s")

        old = signal.signal(signal.SIGALRM, late)
        signal.alarm(max(1, int(timeout)))
        try:
            ray.init(address=address, log_to_driver=False, configure_logging=False, namespace="serve")
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
    return ray


def up(args) -> int:
    if not 1 <= args.capacity <= 256:
        print("wavebridge: --capacity must be 1..256", file=sys.stderr)
        return 2
    old = _read_state(args.state_dir)
    if old and pid_alive(int(old.get("pid", 0))):
        print(f"wavebridge: a cluster is already up (pid {old['pid']}): --engine {old['http']}", file=sys.stderr)
        return 2
    gcs = args.port or _free_port()
    client = args.client_port or _free_port()
    http = args.http_port or _free_port()
    host = args.host
    temp = os.path.abspath(os.path.expanduser(args.temp_dir)) if args.temp_dir else None
    cmd = [_ray_bin(), "start", "--head", "--block", f"--port={gcs}", f"--ray-client-server-port={client}",
           "--include-dashboard=false", "--disable-usage-stats",
           f"--num-cpus={args.num_cpus_total}" if args.num_cpus_total else None,
           f"--temp-dir={temp}" if temp else None]
    # Ray 2.60 asks for a token: this cluster's own, in a 0600 file beside cluster.json
    token = os.path.join(os.path.dirname(_state_path(args.state_dir)), "cluster.token")
    fd = os.open(token + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(secrets.token_hex(32))
    os.replace(token + ".tmp", token)
    _use_token(token)
    env = dict(os.environ, RAY_worker_niceness="0")
    log = open(os.devnull, "wb") if not args.log else open(args.log, "ab")
    proc = subprocess.Popen([c for c in cmd if c], env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    state = {"pid": proc.pid, "address": f"{host}:{gcs}", "ray": f"ray://{host}:{client}",
             "http": f"http://{host}:{http}", "token_path": token, "started": time.time()}
    _write_state(args.state_dir, state)
    try:
        address = state["address"]
        end = time.monotonic() + args.timeout
        while True:                                   # the head takes a few seconds to listen
            if proc.poll() is not None:
                raise RuntimeError(f"ray start exited with {proc.returncode}")
            try:
                with socket.create_connection((host, gcs), timeout=1):
                    break
            except OSError:
                if time.monotonic() > end:
                    raise RuntimeError("the Ray head did not start listening") from None
                time.sleep(0.3)
        os.environ["RAY_worker_niceness"] = "0"
        _connect(address, args.timeout)
        from ray import serve

        from bridge.cluster.replica import build

        serve.start(http_options={"host": host, "port": http})
        auto = args.replicas is None
        serve.run(build(args.backend, replicas=None if auto else args.replicas, capacity=args.capacity,
                        num_cpus=args.num_cpus, num_gpus=args.num_gpus, min_replicas=args.min_replicas,
                        max_replicas=args.max_replicas, target_streams=args.target_streams),
                  name=APP, route_prefix="/")
    except Exception as e:  # noqa: BLE001 — one line, and nothing left running
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(40)
        except ProcessLookupError:
            pass                                   # ray start had exited (its log says why: --log)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        os.unlink(_state_path(args.state_dir))
        print(f"wavebridge: cluster up failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}",
              file=sys.stderr)
        return 2
    n = f"{args.min_replicas}..{args.max_replicas} (autoscaling)" if args.replicas is None else str(args.replicas)
    print(f"wavebridge: cluster up (pid {proc.pid}): {n} {args.backend} replicas of {args.capacity} streams", flush=True)
    print(f"  wavebridge serve --engine {state['http']}", flush=True)
    return 0


def status(args) -> int:
    st = _read_state(args.state_dir)
    address = args.address or (st["address"] if st else None)
    if not address:
        print("wavebridge: no cluster is up (wavebridge cluster up), and no --address", file=sys.stderr)
        return 2
    if st and not args.address and not pid_alive(int(st["pid"])):
        print(f"wavebridge: the cluster started at {st['address']} is gone (pid {st['pid']})", file=sys.stderr)
        return 1
    if st and not args.address:
        _use_token(st.get("token_path"))
    try:
        _connect(address, 30)
        from ray import serve

        s = serve.status()
    except Exception as e:  # noqa: BLE001
        print(f"wavebridge: cannot reach the cluster at {address}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    import ray

    nodes = [n for n in ray.nodes() if n.get("Alive")]
    cpus = sum(float(n.get("Resources", {}).get("CPU", 0)) for n in nodes)
    print(f"cluster {address}: {len(nodes)} node{'s' if len(nodes) != 1 else ''}, {cpus:g} CPUs", flush=True)
    app = s.applications.get(APP)
    if app is None:
        print(f"cluster {address}: no {APP!r} application", flush=True)
        return 1
    print(f"cluster {address}: application {APP} {app.status.value if hasattr(app.status, 'value') else app.status}"
          + (f"  --engine {st['http']}" if st else ""), flush=True)
    for name, dep in app.deployments.items():
        counts = {str(getattr(k, "value", k)): v for k, v in dep.replica_states.items()}
        print(f"  {name}: {dep.status.value if hasattr(dep.status, 'value') else dep.status}, replicas "
              + ", ".join(f"{v} {k.lower()}" for k, v in sorted(counts.items())), flush=True)
    return 0 if str(getattr(app.status, "value", app.status)) == "RUNNING" else 1


def down(args) -> int:
    st = _read_state(args.state_dir)
    if not st:
        print("wavebridge: no cluster was started here (nothing to stop)", file=sys.stderr)
        return 1
    pid = int(st["pid"])
    if pid_alive(pid):
        _use_token(st.get("token_path"))
        try:
            _connect(st["address"], 30)
            from ray import serve

            serve.shutdown()
        except Exception as e:  # noqa: BLE001 — the head goes below anyway
            print(f"wavebridge: serve shutdown: {type(e).__name__}: {e}", file=sys.stderr)
        try:
            import ray

            ray.shutdown()
        except Exception:  # noqa: BLE001
            pass
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        end = time.monotonic() + 30
        while pid_alive(pid) and time.monotonic() < end:
            try:
                if os.waitpid(pid, os.WNOHANG)[0]:
                    break
            except ChildProcessError:
                pass
            time.sleep(0.2)
        if pid_alive(pid):
            os.killpg(pid, signal.SIGKILL)
    os.unlink(_state_path(args.state_dir))
    if st.get("token_path") and os.path.exists(st["token_path"]):
        os.unlink(st["token_path"])
    print(f"wavebridge: cluster down (pid {pid})", flush=True)
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("cluster", help="the engine on Ray Serve on this machine: up, status, down (docs/SCALE.md)")
    p.add_argument("--state-dir", default=None, metavar="DIR", help="where cluster.json goes "
                   "(default ~/.local/state/wavebridge)")
    cs = p.add_subparsers(dest="action", required=True)
    u = cs.add_parser("up", help="start a Ray head and deploy the engine; prints the --engine addresses")
    u.add_argument("--backend", default="synth")
    u.add_argument("--replicas", type=int, default=2, help="fixed replica count (default 2); 0: autoscale")
    u.add_argument("--min-replicas", type=int, default=1)
    u.add_argument("--max-replicas", type=int, default=4)
    u.add_argument("--target-streams", type=float, default=None, help="autoscaling: streams per replica aimed at")
    u.add_argument("--capacity", type=int, default=8, help="streams per replica (max_ongoing_requests)")
    u.add_argument("--num-cpus", type=float, default=1.0, help="CPUs per replica")
    u.add_argument("--num-gpus", type=float, default=0.0, help="(fractional) GPUs per replica")
    u.add_argument("--num-cpus-total", type=int, default=None, help="CPUs the head offers (default: all)")
    u.add_argument("--host", default="127.0.0.1", help="address the head and Serve's HTTP proxy listen on")
    u.add_argument("--port", type=int, default=None, help="Ray's GCS port (default: a free one)")
    u.add_argument("--client-port", type=int, default=None, help="Ray Client port (default: a free one)")
    u.add_argument("--http-port", type=int, default=None, help="Serve's HTTP port (default: a free one)")
    u.add_argument("--temp-dir", default=None, help="Ray's session directory (default /tmp/ray)")
    u.add_argument("--log", default=None, metavar="FILE", help="the Ray head's output (default: discarded)")
    u.add_argument("--timeout", type=float, default=120.0)
    s = cs.add_parser("status", help="the application, its deployments and replicas")
    s.add_argument("--address", default=None, help="a Ray cluster's GCS address (default: the one `up` started)")
    cs.add_parser("down", help="stop what `up` started (this cluster only)")


def run(args) -> int:
    if args.action == "up" and args.replicas == 0:
        args.replicas = None
    try:
        return {"up": up, "status": status, "down": down}[args.action](args)
    except PermissionError as e:
        print(f"wavebridge: {e}", file=sys.stderr)
        return 2
