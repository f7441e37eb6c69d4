"""A Spark standalone cluster on this machine: a master, two workers and the Thrift Server.

`start_cluster` starts them from the jars the pinned `pyspark` ships (`spark-class` and
`spark-submit` in its bin/), all bound to 127.0.0.1, with a Derby metastore and the table
warehouse under one folder (KUBELEDGER_SPARK_CLUSTER_DIR, default `.spark/`):

    .spark/metastore_db/   Derby metastore of the Thrift Server
    .spark/warehouse/      spark.sql.warehouse.dir: the managed tables (Parquet)
    .spark/raw/, config/   the loader's Parquet (kubeledger.spark.parquet_load)
    .spark/run/            one PID file and one log per process

Each process is started with its PID written to `run/<name>.pid` and stopped by that PID
(SIGTERM, then SIGKILL after a grace period), never by name; a PID whose command line is not
the Spark class it was started as (reused after a reboot) is never signalled. The cluster is
small on purpose (two workers of one core and 1 GiB each; the Thrift Server's driver 1.5 GiB):
it shares the machine with everything else. Every port and size is a setting below.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
THRIFT_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
WORKERS = 2


class ClusterError(RuntimeError):
    """The cluster could not start (the message names the process and its log)."""


def _env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, str(default)))


@dataclass(frozen=True)
class ClusterSettings:
    root: Path
    host: str = "127.0.0.1"
    master_port: int = 7177
    thrift_port: int = 10011
    worker_cores: int = 1
    worker_memory: str = "1g"
    executor_memory: str = "768m"
    driver_memory: str = "1536m"
    shuffle_partitions: int = 4

    @classmethod
    def from_env(cls) -> ClusterSettings:
        root = Path(os.environ.get("KUBELEDGER_SPARK_CLUSTER_DIR", ".spark")).resolve()
        return cls(
            root=root,
            host=os.environ.get("KUBELEDGER_SPARK_HOST", "127.0.0.1"),
            master_port=_env_int("KUBELEDGER_SPARK_MASTER_PORT", 7177),
            thrift_port=_env_int("KUBELEDGER_SPARK_THRIFT_PORT", 10011),
            worker_memory=os.environ.get("KUBELEDGER_SPARK_WORKER_MEMORY", "1g"),
            executor_memory=os.environ.get("KUBELEDGER_SPARK_EXECUTOR_MEMORY", "768m"),
            driver_memory=os.environ.get("KUBELEDGER_SPARK_DRIVER_MEMORY", "1536m"),
        )

    @property
    def master_url(self) -> str:
        return f"spark://{self.host}:{self.master_port}"

    @property
    def warehouse_dir(self) -> Path:
        return self.root / "warehouse"

    @property
    def run_dir(self) -> Path:
        return self.root / "run"


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _pid_file(settings: ClusterSettings, name: str) -> Path:
    return settings.run_dir / f"{name}.pid"


def _log_file(settings: ClusterSettings, name: str) -> Path:
    return settings.run_dir / f"{name}.log"


def _java_class(name: str) -> str:
    return THRIFT_CLASS if name == "thrift" else WORKER_CLASS if "worker" in name else MASTER_CLASS


def running_pid(settings: ClusterSettings, name: str) -> int | None:
    """The PID in `run/<name>.pid` when that process is alive and is the Spark class it was
    started as; None otherwise."""
    path = _pid_file(settings, name)
    if not path.exists():
        return None
    try:
        pid = int(path.read_text().strip())
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except (ValueError, OSError, IndexError):
        return None
    if state in ("Z", "X"):
        return None
    # An empty command line: the process is between the launcher script and its exec of java.
    return pid if not cmdline or _java_class(name) in cmdline else None


def _environment(settings: ClusterSettings, name: str) -> dict[str, str]:
    home = spark_home()
    # The launcher sizes the master, the workers and the Thrift Server (a "daemon" to it) by
    # SPARK_DAEMON_MEMORY: small for the first two, the driver's memory for the last.
    daemon_memory = settings.driver_memory if name == "thrift" else "256m"
    return {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": settings.host,
        "SPARK_LOCAL_DIRS": str(settings.root / "tmp"),
        "SPARK_WORKER_DIR": str(settings.root / "work"),
        "SPARK_DAEMON_MEMORY": daemon_memory,
        "SPARK_CONF_DIR": str(settings.root / "conf"),
        "PYSPARK_PYTHON": sys.executable,
    }


def _start(settings: ClusterSettings, name: str, command: list[str]) -> int:
    pid = running_pid(settings, name)
    if pid is not None:
        return pid
    log = _log_file(settings, name).open("ab")
    process = subprocess.Popen(
        command,
        env=_environment(settings, name),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=settings.root,
        start_new_session=True,
    )
    log.close()
    _pid_file(settings, name).write_text(f"{process.pid}\n")
    return process.pid


def _wait_for_port(settings: ClusterSettings, name: str, port: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if running_pid(settings, name) is None:
            raise ClusterError(f"spark {name} exited; see {_log_file(settings, name)}")
        with socket.socket() as probe:
            probe.settimeout(1)
            if probe.connect_ex((settings.host, port)) == 0:
                return
        time.sleep(1)
    raise ClusterError(
        f"spark {name} did not listen on {settings.host}:{port} within {timeout:.0f}s; "
        f"see {_log_file(settings, name)}"
    )


def _wait_for_workers(settings: ClusterSettings, timeout: float) -> None:
    """Until both workers registered with the master (the master's log says so)."""
    deadline = time.monotonic() + timeout
    log = _log_file(settings, "master")
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace") if log.exists() else ""
        if text.count("Registering worker") >= WORKERS:
            return
        time.sleep(1)
    raise ClusterError(f"the Spark workers did not register within {timeout:.0f}s; see {log}")


def thrift_conf(settings: ClusterSettings) -> dict[str, str]:
    """The Thrift Server's Spark settings: the same semantics as the `spark` session target
    (UTC, decimal sums keep their scale, unreadable timestamps are null)."""
    metastore = settings.root / "metastore_db"
    return {
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(settings.warehouse_dir),
        "spark.hadoop.javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={metastore};create=true"
        ),
        "spark.driver.extraJavaOptions": (
            f"-Dderby.system.home={settings.root} -Duser.timezone=UTC"
        ),
        "spark.executor.extraJavaOptions": "-Duser.timezone=UTC",
        "spark.driver.host": settings.host,
        "spark.driver.bindAddress": settings.host,
        "spark.executor.memory": settings.executor_memory,
        "spark.executor.cores": str(settings.worker_cores),
        "spark.cores.max": str(settings.worker_cores * WORKERS),
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.legacy.timeParserPolicy": "CORRECTED",
        "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
        "spark.sql.decimalOperations.allowPrecisionLoss": "false",
        "spark.sql.shuffle.partitions": str(settings.shuffle_partitions),
        "spark.sql.sources.partitionOverwriteMode": "dynamic",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
    }


def start_cluster(settings: ClusterSettings | None = None, *, timeout: float = 180) -> None:
    """Start the master, the workers and the Thrift Server (those not running already) and
    wait until the Thrift Server accepts connections."""
    settings = settings or ClusterSettings.from_env()
    for folder in (settings.run_dir, settings.warehouse_dir, settings.root / "tmp"):
        folder.mkdir(parents=True, exist_ok=True)
    (settings.root / "conf").mkdir(exist_ok=True)
    (settings.root / "conf" / "log4j2.properties").write_text(LOG4J)
    bin_dir = spark_home() / "bin"
    spark_class = str(bin_dir / "spark-class")
    host = settings.host
    _start(
        settings,
        "master",
        [spark_class, MASTER_CLASS, "--host", host, "--port", str(settings.master_port),
         "--webui-port", "0"],
    )  # fmt: skip
    _wait_for_port(settings, "master", settings.master_port, timeout)
    for number in range(1, WORKERS + 1):
        _start(
            settings,
            f"worker{number}",
            [spark_class, WORKER_CLASS, "--host", host, "--cores", str(settings.worker_cores),
             "--memory", settings.worker_memory, "--webui-port", "0",
             "--work-dir", str(settings.root / "work"), settings.master_url],
        )  # fmt: skip
    _wait_for_workers(settings, timeout)
    submit = [str(bin_dir / "spark-submit"), "--class", THRIFT_CLASS, "--name", "kubeledger"]
    submit += ["--master", settings.master_url, "--driver-memory", settings.driver_memory]
    for key, value in thrift_conf(settings).items():
        submit += ["--conf", f"{key}={value}"]
    submit += ["spark-internal"]
    submit += ["--hiveconf", f"hive.server2.thrift.bind.host={host}"]
    submit += ["--hiveconf", f"hive.server2.thrift.port={settings.thrift_port}"]
    _start(settings, "thrift", submit)
    _wait_for_port(settings, "thrift", settings.thrift_port, timeout)


def stop_cluster(settings: ClusterSettings | None = None, *, grace: float = 30) -> list[str]:
    """Stop the Thrift Server, the workers and the master by their PID files; return the
    names of the processes stopped."""
    settings = settings or ClusterSettings.from_env()
    stopped = []
    names = ["thrift", *(f"worker{n}" for n in range(WORKERS, 0, -1)), "master"]
    for name in names:
        pid = running_pid(settings, name)
        if pid is not None:
            _terminate(settings, name, pid, grace)
            stopped.append(name)
        _pid_file(settings, name).unlink(missing_ok=True)
    return stopped


def _children(pid: int) -> list[int]:
    """The PIDs whose parent is `pid` (a worker's executors)."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[1] == str(pid):
            children.append(int(stat.parent.name))
    return children


def _wait_gone(pids: list[int], grace: float) -> None:
    """Wait for the processes to end; SIGKILL those still there after `grace` seconds."""
    deadline = time.monotonic() + grace
    alive = list(pids)
    while alive:
        alive = [pid for pid in alive if Path(f"/proc/{pid}").exists() and not _zombie(pid)]
        if not alive:
            return
        if time.monotonic() > deadline:
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + 10
        time.sleep(0.3)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def _terminate(settings: ClusterSettings, name: str, pid: int, grace: float) -> None:
    # A worker stops its executors when it stops; they are waited for (by PID) as well.
    children = _children(pid)
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and running_pid(settings, name) is not None:
        time.sleep(0.5)
    if running_pid(settings, name) is not None:
        os.kill(pid, signal.SIGKILL)
        while running_pid(settings, name) is not None:
            time.sleep(0.2)
    _wait_gone(children, grace)


def status(settings: ClusterSettings | None = None) -> dict[str, int | None]:
    settings = settings or ClusterSettings.from_env()
    names = ["master", *(f"worker{n}" for n in range(1, WORKERS + 1)), "thrift"]
    return {name: running_pid(settings, name) for name in names}


LOG4J = """\
rootLogger.level = warn
rootLogger.appenderRef.stdout.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n
logger.master.name = org.apache.spark.deploy.master.Master
logger.master.level = info
logger.thrift.name = org.apache.spark.sql.hive.thriftserver
logger.thrift.level = info
"""


def main(argv: list[str] | None = None) -> int:
    """`python -m kubeledger.spark.cluster up|down|status` (the Makefile's spark-up/-down)."""
    args = argv if argv is not None else sys.argv[1:]
    action = args[0] if args else "status"
    settings = ClusterSettings.from_env()
    if action == "up":
        try:
            start_cluster(settings)
        except ClusterError as exc:
            print(f"spark-up failed: {exc}", file=sys.stderr)
            stop_cluster(settings)
            return 1
        print(
            f"Spark cluster up: master {settings.master_url}, {WORKERS} workers, Thrift Server "
            f"{settings.host}:{settings.thrift_port}; tables in {settings.warehouse_dir}"
        )
        return 0
    if action == "down":
        stopped = stop_cluster(settings)
        print(f"Spark cluster down (stopped: {', '.join(stopped) or 'nothing was running'})")
        return 0
    for name, pid in status(settings).items():
        print(f"{name}: {'running, pid ' + str(pid) if pid else 'not running'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
