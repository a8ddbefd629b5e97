"""What a schema cannot see: the rendered manifests agree with toolhost.toml,
the Secret template and the container image.

Usage: python3 deploy/check-manifests.py RENDERED.yaml

RENDERED.yaml is `kubectl kustomize deploy/kubernetes`. Needs PyYAML (and,
before Python 3.11, tomli); deploy/validate runs it in its virtualenv. Each
failure names the file and what to change; the exit status is 1 if any.
"""

import re
import sys
from pathlib import Path

import yaml

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
KUBERNETES = HERE / "kubernetes"
# How long toolhost takes past http.shutdown_grace_secs to close its
# streams and connections (CONNECTION_CLOSE_WAIT in
# host/src/transport/http.rs).
CONNECTION_CLOSE_SECS = 5
# The image's compile cache home (ENV XDG_CACHE_HOME in the Containerfile).
IMAGE_ENV = re.compile(r"^ENV XDG_CACHE_HOME=(\S+)", re.MULTILINE)

failures = []


def fail(message):
    failures.append(message)


def strings(value):
    """Every string in a parsed TOML value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def main(rendered_path):
    documents = [d for d in yaml.safe_load_all(Path(rendered_path).read_text()) if d]
    by_kind = {}
    for doc in documents:
        by_kind.setdefault(doc["kind"], {})[doc["metadata"]["name"]] = doc

    config = tomllib.loads((KUBERNETES / "toolhost.toml").read_text())
    secret = yaml.safe_load((KUBERNETES / "secret.example.yaml").read_text())
    containerfile = (HERE / "Containerfile").read_text()

    deployment = by_kind["Deployment"]["toolhost"]
    pod = deployment["spec"]["template"]["spec"]
    (container,) = [c for c in pod["containers"] if c["name"] == "toolhost"]

    # Every variable the config reads is set, from the Secret the template
    # describes, under a key the template has.
    wanted = set()
    for value in strings(config):
        wanted.update(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", value))
    for table in [config.get("state", {}).get("keys", []), config.get("auth", {}).get("tokens", [])]:
        wanted.update(entry["env"] for entry in table if "env" in entry)
    env = {e["name"]: e for e in container.get("env", [])}
    for name in sorted(wanted):
        if name not in env:
            fail(f"deployment.yaml: toolhost.toml reads ${name}, but the container does not set it")
    for name, entry in env.items():
        ref = entry.get("valueFrom", {}).get("secretKeyRef")
        if ref is None:
            continue
        if ref["name"] != secret["metadata"]["name"]:
            fail(f"deployment.yaml: {name} comes from Secret {ref['name']}, "
                 f"not {secret['metadata']['name']} (secret.example.yaml)")
        elif ref["key"] not in secret.get("stringData", {}):
            fail(f"secret.example.yaml: has no key {ref['key']!r}, which deployment.yaml reads into {name}")

    # The pod outlives the drain: the preStop pause, the call grace, the
    # streams' closing.
    grace = config.get("http", {}).get("shutdown_grace_secs", 30)
    pause = container.get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds", 0)
    needed = pause + grace + CONNECTION_CLOSE_SECS
    termination = pod.get("terminationGracePeriodSeconds", 30)
    if termination <= needed:
        fail(f"deployment.yaml: terminationGracePeriodSeconds ({termination}) must exceed the preStop "
             f"pause ({pause}) + http.shutdown_grace_secs ({grace}) + {CONNECTION_CLOSE_SECS} s "
             f"of closing = {needed}")

    # The listen port is the one the probes and the Service use.
    listen = config.get("host", {}).get("http", "")
    port = int(listen.rsplit(":", 1)[1]) if ":" in listen else None
    ports = {p.get("name"): p["containerPort"] for p in container.get("ports", [])}
    if ports.get("http") != port:
        fail(f"deployment.yaml: the `http` container port ({ports.get('http')}) is not host.http's port ({port})")
    for probe, path in [("readinessProbe", "/readyz"), ("livenessProbe", "/healthz"),
                        ("startupProbe", "/healthz")]:
        get = container.get(probe, {}).get("httpGet", {})
        if get.get("path") != path or get.get("port") not in ("http", port):
            fail(f"deployment.yaml: {probe} should GET {path} on the http port, not {get}")
    service = by_kind["Service"]["toolhost"]
    if service["spec"]["ports"][0]["targetPort"] not in ("http", port):
        fail("service.yaml: targetPort is not the container's http port")

    # A non-loopback listener needs [auth] (toolhost refuses to start).
    if not listen.startswith(("127.", "[::1]")) and "auth" not in config:
        fail(f"toolhost.toml: host.http = {listen!r} needs an [auth] table")

    # The replay store is the in-cluster Redis Service.
    replay = config.get("state", {}).get("replay")
    if replay:
        match = re.match(r"rediss?://(?:[^@/]*@)?([^:/]+)(?::(\d+))?", replay)
        host, redis_port = match.group(1), int(match.group(2) or 6379)
        redis = by_kind["Service"].get(host)
        if redis is None:
            fail(f"toolhost.toml: state.replay names {host!r}, which is no Service here")
        elif redis_port not in [p["port"] for p in redis["spec"]["ports"]]:
            fail(f"toolhost.toml: state.replay's port {redis_port} is not a port of Service {host}")

    # The writable places: the compile cache, at the image's
    # XDG_CACHE_HOME, and the audit trail's directory.
    cache_home = IMAGE_ENV.search(containerfile)
    mounts = {m["mountPath"]: m for m in container.get("volumeMounts", [])}
    if not cache_home:
        fail("Containerfile: no ENV XDG_CACHE_HOME= line")
    elif cache_home.group(1) not in mounts or mounts[cache_home.group(1)].get("readOnly"):
        fail(f"deployment.yaml: mount a writable volume at {cache_home.group(1)} "
             f"(XDG_CACHE_HOME in the Containerfile): the root file system is read-only")
    if not container.get("securityContext", {}).get("readOnlyRootFilesystem"):
        fail("deployment.yaml: the toolhost container should set readOnlyRootFilesystem: true")
    # The audit trail is written beside the compile cache's volume, on one
    # of its own: a trail that cannot be written refuses every mutation.
    audit = config.get("host", {}).get("audit")
    if audit:
        directory = audit.rsplit("/", 1)[0]
        if directory not in mounts or mounts[directory].get("readOnly"):
            fail(f"deployment.yaml: mount a writable volume at {directory} for host.audit "
                 f"({audit}): the root file system is read-only, and a trail that cannot be "
                 f"written refuses every mutation")

    # Redis's password is on no command line: it comes in a file.
    redis_deployment = by_kind["Deployment"].get("redis")
    if redis_deployment:
        redis_container = redis_deployment["spec"]["template"]["spec"]["containers"][0]
        if "--requirepass" in redis_container.get("args", []):
            fail("redis.yaml: pass requirepass in a file from the Secret, not as --requirepass: "
                 "a command line is readable by anyone who can list processes")

    # Replicas and disruption budget leave room for a drain.
    pdb = by_kind["PodDisruptionBudget"]["toolhost"]
    if pdb["spec"]["minAvailable"] >= deployment["spec"]["replicas"]:
        fail("poddisruptionbudget.yaml: minAvailable must be below the Deployment's replicas, "
             "or no node can ever be drained")

    for message in failures:
        print(f"error: {message}", file=sys.stderr)
    if failures:
        return 1
    print(f"manifests agree with toolhost.toml, the Secret template and the image "
          f"({len(documents)} resources)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
