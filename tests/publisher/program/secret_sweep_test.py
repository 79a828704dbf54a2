#!/usr/bin/env python3
"""No secret in any output: the binaries run through every path that prints
configuration, with a sentinel secret in every place a secret can be, and
nothing they print or serve may show one.

Places: the password in --pg and --pg-primary, in PGPASSWORD and in a .pgpass file
(PGPASSFILE);
sasl.password, sasl.jaas.config and ssl.key.password given by -X, by -F and by
OUTBOX_KAFKA_*, each spelled right and misspelled.
Paths: the start line, the stats line, /metrics, /healthz, /readyz and /livez of a
running publisher; a property librdkafka refuses, a value it refuses, a value the
publisher refuses, an unreachable broker, a refused PostgreSQL login (each
password place), a bad conninfo; --check; the consumer example running, serving
/metrics, and refusing a property.

A throwaway PostgreSQL (tools/harness/pg_cluster.sh) and mock-kafka, both
stopped at the end, pass or fail.

Usage: secret_sweep_test.py REPOSITORY BUILD_DIR
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

SENTINEL = "SENTINEL"  # Every secret below starts with it.

repository, build = sys.argv[1], sys.argv[2]
publisher = os.path.join(build, "outbox-publisher")
consumer = os.path.join(build, "outbox-paid-orders")
cluster_script = os.path.join(repository, "tools/harness/pg_cluster.sh")
work = tempfile.mkdtemp(prefix="outbox-secret-sweep.")
runs = []        # (what, everything it printed or served)
leaks = []
cleanup = []


def secret(place):
    return "%s-%s-x9" % (SENTINEL, place)


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path),
                                    timeout=5) as r:
            return r.read().decode()
    except urllib.error.HTTPError as e:
        return e.read().decode()
    except OSError as e:
        return "no answer: %s" % e


def record(what, text):
    runs.append((what, text))
    if SENTINEL.lower() in text.lower():
        line = next(l for l in text.splitlines() if SENTINEL.lower() in l.lower())
        leaks.append("%s: %s" % (what, line))


def wait_for(condition, seconds, what):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise SystemExit("secret_sweep: timed out waiting for %s" % what)


def run(what, argv, env=None, expect=None, timeout=60):
    """Runs to its end; records its output; checks its exit code."""
    p = subprocess.run(argv, env=dict(os.environ, **(env or {})), capture_output=True,
                       text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    out = p.stdout + p.stderr
    record(what, out)
    if expect is not None and p.returncode != expect:
        raise SystemExit("secret_sweep: %s exited %d, not %d:\n%s" %
                         (what, p.returncode, expect, out[-2000:]))
    return out


def serve(what, argv, env, ready_text, paths, port):
    """Runs until `ready_text` is logged, reads `paths`, stops it (SIGTERM)."""
    log = os.path.join(work, "serve-%d.log" % len(runs))
    with open(log, "w") as f:
        p = subprocess.Popen(argv, env=dict(os.environ, **env), stdout=f, stderr=f,
                             stdin=subprocess.DEVNULL)
    cleanup.append(lambda: p.poll() is None and p.kill())
    text = lambda: open(log).read()
    wait_for(lambda: all(t in text() for t in ready_text) or p.poll() is not None, 90,
             "%s to log %s" % (what, ready_text))
    if p.poll() is not None:
        raise SystemExit("secret_sweep: %s exited %d:\n%s" % (what, p.returncode, text()))
    for path in paths:
        record("%s GET %s" % (what, path), get(port, path))
    p.send_signal(signal.SIGTERM)
    p.wait(60)
    record(what, text())


def kafka_places(props):
    """The ways to give `props` (name -> value): -X, -F file, OUTBOX_KAFKA_*."""
    ways = []
    ways.append(("-X", sum((["-X", "%s=%s" % kv] for kv in props.items()), []), {}))
    path = os.path.join(work, "kafka-%d.properties" % len(runs))
    with open(path, "w") as f:
        f.writelines("%s=%s\n" % kv for kv in props.items())
    ways.append(("-F", ["-F", path], {}))
    env = {"OUTBOX_KAFKA_" + k.upper().replace(".", "_"): v for k, v in props.items()}
    ways.append(("OUTBOX_KAFKA_*", [], env))
    return ways


def main():
    # PostgreSQL, with a role whose login needs a password.
    started = subprocess.run([cluster_script, "start", "--owner", str(os.getpid())],
                             capture_output=True, text=True, check=True).stdout
    pg = dict(l.split("=", 1) for l in started.splitlines() if "=" in l)
    cleanup.append(lambda: subprocess.run([cluster_script, "stop", pg["PG_CLUSTER_DIR"]]))
    psql_env = dict(os.environ, **pg)
    psql = lambda sql: subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql],
                                      env=psql_env, check=True, capture_output=True)
    subprocess.run(["psql", "-q", "-v", "ON_ERROR_STOP=1", "-f",
                    os.path.join(repository, "scripts/schema.sql")], env=psql_env,
                   check=True, capture_output=True)
    psql("CREATE ROLE sweeper LOGIN PASSWORD 'the-right-one'")
    hba = os.path.join(pg["PG_CLUSTER_DIR"], "data/pg_hba.conf")
    with open(hba) as f:
        rules = f.read()
    with open(hba, "w") as f:
        f.write("host all sweeper 127.0.0.1/32 scram-sha-256\n" + rules)
    psql("SELECT pg_reload_conf()")
    port = pg["PGPORT"]
    conninfo = "host=127.0.0.1 port=%s dbname=postgres user=postgres password=%s" % (
        port, secret("pg-conninfo"))

    # A Kafka-protocol broker.
    mock = subprocess.Popen([os.path.join(build, "mock-kafka")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    cleanup.append(lambda: mock.kill())
    brokers = mock.stdout.readline().strip().split("=", 1)[1]

    # --pg-primary is read only when --pg is a standby; its password must not show
    # where the configuration is printed all the same.
    base = [publisher, "--pg", conninfo, "--brokers", brokers, "--log-stats-every", "1s",
            "--pg-primary", "host=127.0.0.1 port=%s password=%s" % (port,
                                                                    secret("pg-primary"))]
    right = {"sasl.password": secret("sasl-password"),
             "ssl.key.password": secret("ssl-key-password")}
    # 1. Running: start line, stats line, every endpoint; each Kafka place.
    for place, args, env in kafka_places(right):
        metrics = free_port()
        serve("publisher with secrets by " + place,
              base + ["--metrics-port", str(metrics)] + args, env,
              ['"msg":"streaming"', '"msg":"stats"'],
              ["/metrics", "/healthz", "/readyz", "/livez"], metrics)
        run("--check with secrets by " + place, base[:5] + ["--check"] + args, env)

    # 2. Refused properties: the Java client's sasl.jaas.config, and each secret
    # misspelled, in each place.
    refused = {"sasl.jaas.config":
               'org.apache.kafka.common.security.plain.PlainLoginModule required '
               'username="u" password="%s";' % secret("jaas"),
               "sasl.pasword": secret("sasl-pasword"),
               "ssl.key.pasword": secret("ssl-key-pasword"),
               "sasl.jaas.confg": secret("jaas-confg")}
    for name, value in refused.items():
        for place, args, env in kafka_places({name: value}):
            out = run("publisher refusing %s by %s" % (name, place), base + args, env,
                      expect=2)
            if name not in out:
                raise SystemExit("secret_sweep: the refusal does not name %s:\n%s" %
                                 (name, out))
    # A value librdkafka refuses, and values the publisher refuses.
    run("a value librdkafka refuses",
        base + ["-X", "enable.idempotence=" + secret("bool")], expect=2)
    run("a value the publisher refuses", base + ["-X", "acks=" + secret("acks")],
        expect=2)
    run("a value the publisher refuses (exactly-once)",
        base + ["-X", "transactional.id=" + secret("txn")], expect=2)

    # 3. An unreachable broker, with secrets on both sides.
    run("an unreachable broker",
        [publisher, "--pg", conninfo, "--brokers", "127.0.0.1:1", "-X",
         "sasl.password=" + secret("unreachable")], expect=2, timeout=120)

    # 4. Refused PostgreSQL logins: the password in --pg, PGPASSWORD, .pgpass.
    sweeper = "host=127.0.0.1 port=%s dbname=postgres user=sweeper" % port
    run("a refused login (--pg)",
        [publisher, "--pg", "%s password=%s" % (sweeper, secret("login")), "--brokers",
         brokers], expect=2)
    run("a refused login (PGPASSWORD)", [publisher, "--pg", sweeper, "--brokers", brokers],
        env={"PGPASSWORD": secret("pgpassword")}, expect=2)
    pgpass = os.path.join(work, "pgpass")
    with open(pgpass, "w") as f:
        f.write("127.0.0.1:%s:*:sweeper:%s\n" % (port, secret("pgpass")))
    os.chmod(pgpass, 0o600)
    run("a refused login (.pgpass)", [publisher, "--pg", sweeper, "--brokers", brokers],
        env={"PGPASSFILE": pgpass}, expect=2)
    run("--check with a refused login",
        [publisher, "--check", "--pg", "%s password=%s" % (sweeper, secret("check")),
         "--brokers", brokers], expect=2)

    # 5. Bad conninfos.
    run("a malformed conninfo",
        [publisher, "--pg", "host=127.0.0.1 password=%s port" % secret("malformed"),
         "--brokers", brokers], expect=2)
    run("a conninfo URI with an unknown option",
        [publisher, "--pg", "postgresql://u:%s@127.0.0.1:%s/postgres?nonsense=1" %
         (secret("uri"), port), "--brokers", brokers], expect=2)

    # 6. The consumer example: running (its start line and /metrics), and refusing.
    cbase = [consumer, "--pg", conninfo, "--brokers", brokers]
    for place, args, env in kafka_places(right):
        metrics = free_port()
        serve("consumer with secrets by " + place,
              cbase + ["--metrics-port", str(metrics)] + args, env, ['"msg":"consuming"'],
              ["/metrics", "/healthz", "/readyz", "/livez"], metrics)
    for name in ("sasl.jaas.config", "sasl.pasword"):
        for place, args, env in kafka_places({name: refused[name]}):
            run("consumer refusing %s by %s" % (name, place), cbase + args, env)
    run("consumer with a malformed conninfo",
        [consumer, "--pg", "host=127.0.0.1 password=%s port" % secret("c-malformed"),
         "--brokers", brokers])

    if leaks:
        print("secret_sweep: a sentinel secret was printed or served:", file=sys.stderr)
        for leak in leaks:
            print("  " + leak, file=sys.stderr)
        return 1
    print("secret_sweep: %d outputs of %d binaries' runs, no sentinel in any" %
          (len(runs), 2))
    return 0


if __name__ == "__main__":
    try:
        code = main()
    finally:
        for f in reversed(cleanup):
            try:
                f()
            except Exception:  # noqa: BLE001 - cleaning up whatever is left
                pass
        subprocess.run(["rm", "-rf", work])
    sys.exit(code)
