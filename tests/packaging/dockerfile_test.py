#!/usr/bin/env python3
"""The Dockerfile builds, without a Docker engine.

Reads the repository's Dockerfile and, in a fresh folder, does what `docker build`
would do with it as far as this machine allows:

  1. copies exactly what the build stage's COPY lines copy, and nothing else;
  2. runs the build stage's RUN commands there (its apt-get line is checked against
     the installed packages instead of run);
  3. checks that each binary the runtime stage copies was built, that the image has
     both the publisher and the consumer example, runs as a numeric non-root user,
     EXPOSEs a port and has a HEALTHCHECK;
  4. maps every shared library the binaries load (ldd) to its Debian package
     (dpkg -S) and checks that the runtime stage's apt-get line installs it, directly
     or as a dependency;
  5. checks that the binaries carry the pinned librdkafka (packaging/librdkafka.env,
     linked statically: `--version` names it, ldd shows no librdkafka) and that
     neither stage installs a librdkafka package of Debian's, another release;
  6. runs the HEALTHCHECK command against a local HTTP server answering /readyz
     with 200, then 503, then against a closed port;
  7. runs `docker build` too where a Docker engine answers.

Usage: dockerfile_test.py [REPOSITORY] (default: two folders up from this file).
Exits 0 when every check passes, 1 naming each that failed.
"""

import http.server
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

failures = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message, file=sys.stderr)


def instructions(text):
    """The Dockerfile's instructions as (KEYWORD, arguments), continuations joined."""
    result = []
    pending = ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if pending and line.lstrip().startswith("#"):
            continue  # A comment inside a continued instruction.
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        keyword, _, arguments = whole.partition(" ")
        result.append((keyword.upper(), arguments.strip()))
    return result


def stages(steps):
    """Splits the instructions at each FROM: a list of (from-arguments, steps)."""
    result = []
    for keyword, arguments in steps:
        if keyword == "FROM":
            result.append((arguments, []))
        elif result:
            result[-1][1].append((keyword, arguments))
    return result


def copy_arguments(arguments):
    """A COPY's options (--from=...) and its sources and destination."""
    if arguments.startswith("["):
        words = json.loads(arguments)
    else:
        words = shlex.split(arguments)
    options = [w for w in words if w.startswith("--")]
    paths = [w for w in words if not w.startswith("--")]
    return options, paths[:-1], paths[-1]


def apt_packages(command):
    """The packages an `apt-get install` in a RUN command names."""
    match = re.search(r"apt-get install ([^&;|]*)", command)
    if not match:
        return []
    return [w for w in match.group(1).split() if not w.startswith("-")]


def installed(package):
    status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package],
                            capture_output=True, text=True)
    return status.returncode == 0 and "install ok installed" in status.stdout


def inside(workdir, path, root):
    """An image path (absolute or relative to WORKDIR) inside the folder `root`."""
    absolute = path if path.startswith("/") else os.path.join(workdir, path)
    return os.path.join(root, os.path.normpath(absolute).lstrip("/"))


def build_stage(repository, stage, root):
    """Copies and runs the build stage in `root`; the stage's name."""
    from_arguments, steps = stage
    words = from_arguments.split()
    name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
    workdir = "/"
    environment = dict(os.environ)
    for keyword, arguments in steps:
        if keyword == "WORKDIR":
            workdir = os.path.join(workdir, arguments)
            os.makedirs(inside("/", workdir, root), exist_ok=True)
        elif keyword == "ENV":
            for key, value in (w.split("=", 1) for w in shlex.split(arguments)):
                environment[key] = value
        elif keyword == "COPY":
            options, sources, destination = copy_arguments(arguments)
            if options:
                fail("the build stage copies with options (%s); the test cannot" % options)
                continue
            target = inside(workdir, destination, root)
            for source in sources:
                origin = os.path.join(repository, source)
                if not os.path.exists(origin):
                    fail("COPY %s: no such file in the repository" % source)
                elif os.path.isdir(origin):  # A folder's contents go into the target.
                    shutil.copytree(origin, target, dirs_exist_ok=True)
                else:
                    into_folder = (destination.endswith("/") or destination == "." or
                                   len(sources) > 1)
                    os.makedirs(target if into_folder else os.path.dirname(target),
                                exist_ok=True)
                    shutil.copy2(origin, os.path.join(target, os.path.basename(source))
                                 if into_folder else target)
        elif keyword == "RUN":
            packages = apt_packages(arguments)
            if packages:
                missing = [p for p in packages if not installed(p)]
                if missing:
                    fail("the build stage installs %s, which this machine lacks "
                         "(scripts/install-deps.sh)" % " ".join(missing))
                continue
            print("RUN " + arguments, flush=True)
            run = subprocess.run(["bash", "-c", arguments], cwd=inside("/", workdir, root),
                                 env=environment)
            if run.returncode != 0:
                fail("the build stage's RUN failed (exit %d): %s" % (run.returncode,
                                                                    arguments))
                return name
    return name


def library_packages(binary):
    """{library path: Debian package} for every library `binary` loads."""
    ldd = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True)
    result = {}
    for line in ldd.stdout.splitlines():
        match = re.search(r"=> (/\S+)", line) or re.match(r"\s*(/\S+)", line)
        if not match:
            continue  # linux-vdso: no file.
        path = match.group(1)
        candidates = {path, os.path.realpath(path)}
        for p in list(candidates):  # Debian 12's merged /usr: either spelling.
            candidates.add(p[4:] if p.startswith("/usr/") else "/usr" + p)
        package = None
        for candidate in sorted(candidates):
            owner = subprocess.run(["dpkg", "-S", candidate], capture_output=True,
                                   text=True)
            if owner.returncode == 0:
                package = owner.stdout.split(":")[0].split(",")[0].strip()
                break
        result[path] = package
    return result


def dependency_closure(packages):
    """The packages apt-get installs for `packages`: them and what they depend on,
    read from dpkg's records of the installed packages (no package lists needed)."""
    closure = set()
    pending = list(packages)
    while pending:
        package = pending.pop()
        if package in closure:
            continue
        closure.add(package)
        record = subprocess.run(
            ["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", package],
            capture_output=True, text=True)
        if record.returncode != 0:
            fail("the runtime stage installs %s, which is not installed here to read "
                 "its dependencies" % package)
            continue
        for clause in record.stdout.split(","):
            for alternative in clause.split("|"):  # Each installed alternative.
                name = alternative.strip().split(" ")[0].split(":")[0]
                if name and installed(name):
                    pending.append(name)
    return closure


def pinned_librdkafka(repository):
    """The librdkafka release that ships: packaging/librdkafka.env's."""
    with open(os.path.join(repository, "packaging", "librdkafka.env")) as f:
        for line in f:
            if line.startswith("LIBRDKAFKA_VERSION="):
                return line.split("=", 1)[1].strip()
    fail("packaging/librdkafka.env names no LIBRDKAFKA_VERSION")
    return None


def check_librdkafka(repository, all_stages, binaries):
    """The image's one librdkafka is the pinned release, inside the binaries."""
    pinned = pinned_librdkafka(repository)
    for from_arguments, steps in all_stages:
        for keyword, arguments in steps:
            if keyword != "RUN":
                continue
            for package in apt_packages(arguments):
                if package.startswith("librdkafka"):
                    fail("the stage FROM %s installs %s: Debian's librdkafka is another "
                         "release than the pinned %s" % (from_arguments, package, pinned))
            if "OUTBOX_LIBRDKAFKA=system" in arguments:
                fail("the build stage configures OUTBOX_LIBRDKAFKA=system: the image "
                     "would ship Debian's librdkafka, not the pinned %s" % pinned)
    for built, _ in binaries:
        name = os.path.basename(built)
        loaded = [path for path in library_packages(built) if "librdkafka" in path]
        if loaded:
            fail("%s loads %s: librdkafka is linked statically" % (name, loaded[0]))
        version = subprocess.run([built, "--version"], capture_output=True, text=True)
        found = re.search(r"librdkafka ([0-9.]+)\b", version.stdout)
        if not found or found.group(1) != pinned:
            fail("%s --version says %r, not librdkafka %s (packaging/librdkafka.env)" %
                 (name, version.stdout.strip(), pinned))


def check_runtime(stage, build_name, root):
    """The runtime stage: its binaries, user, port, health check and libraries;
    the binaries, as (path here, path in the image)."""
    steps = stage[1]
    binaries = []
    packages = []
    for keyword, arguments in steps:
        if keyword == "COPY":
            options, sources, destination = copy_arguments(arguments)
            if "--from=%s" % build_name in options:
                for source in sources:
                    built = inside("/", source, root)
                    if not os.access(built, os.X_OK):
                        fail("COPY --from=%s %s: the build stage made no such file" %
                             (build_name, source))
                    else:
                        binaries.append((built, destination))
        elif keyword == "RUN":
            packages += apt_packages(arguments)
    names = {os.path.basename(destination) for _, destination in binaries}
    for wanted in ("outbox-publisher", "outbox-paid-orders"):
        if wanted not in names:
            fail("the image does not hold %s" % wanted)

    users = [a for k, a in steps if k == "USER"]
    if not users or not re.fullmatch(r"[1-9][0-9]*(:[0-9]+)?", users[-1]):
        fail("USER must be a numeric non-root uid (Kubernetes runAsNonRoot); found %s"
             % (users[-1] if users else "none"))
    if not any(k == "EXPOSE" for k, _ in steps):
        fail("no EXPOSE for the metrics port")
    if not any(k == "HEALTHCHECK" for k, _ in steps):
        fail("no HEALTHCHECK")

    if not packages:
        fail("the runtime stage installs no packages")
        return binaries
    closure = dependency_closure(packages)
    for built, _ in binaries:
        for path, package in library_packages(built).items():
            if package is None:
                fail("%s loads %s, which no Debian package owns" %
                     (os.path.basename(built), path))
            elif package not in closure:
                fail("%s loads %s from %s, which the runtime stage's apt-get line does "
                     "not install" % (os.path.basename(built), path, package))
    return binaries


class Healthz(http.server.BaseHTTPRequestHandler):
    status = 200

    def do_GET(self):
        self.send_response(Healthz.status if self.path == "/readyz" else 404)
        self.end_headers()
        self.wfile.write(b"ok\n" if Healthz.status == 200 else b"not streaming\n")

    def log_message(self, *args):
        pass


def check_healthcheck(stage):
    """The HEALTHCHECK passes on 200 and fails on 503 and on a closed port."""
    checks = [a for k, a in stage[1] if k == "HEALTHCHECK"]
    if not checks:
        return
    command = checks[-1][checks[-1].index("CMD") + 3:].strip()
    argv = json.loads(command) if command.startswith("[") else ["sh", "-c", command]
    server = http.server.HTTPServer(("127.0.0.1", 0), Healthz)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]

    def probe(on_port):
        environment = dict(os.environ, OUTBOX_METRICS_PORT=str(on_port))
        return subprocess.run(argv, env=environment, capture_output=True,
                              timeout=30).returncode

    Healthz.status = 200
    if probe(port) != 0:
        fail("the HEALTHCHECK fails against /readyz answering 200")
    Healthz.status = 503
    if probe(port) == 0:
        fail("the HEALTHCHECK passes against /readyz answering 503")
    server.shutdown()
    server.server_close()
    with socket.socket() as s:  # A port nothing listens on.
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    if probe(closed) == 0:
        fail("the HEALTHCHECK passes with nothing listening")


def docker_build(repository):
    engine = shutil.which("docker") and subprocess.run(
        ["docker", "info"], capture_output=True).returncode == 0
    if not engine:
        print("dockerfile_test: no Docker engine answers here: `docker build` not run; "
              "every other check ran")
        return
    run = subprocess.run(["docker", "build", "-t", "outbox-publisher:test", repository])
    if run.returncode != 0:
        fail("docker build failed")


def main():
    repository = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                                 os.path.join(os.path.dirname(__file__), "..", ".."))
    with open(os.path.join(repository, "Dockerfile")) as f:
        all_stages = stages(instructions(f.read()))
    if len(all_stages) < 2:
        fail("expected a build stage and a runtime stage")
        return 1
    root = tempfile.mkdtemp(prefix="outbox-dockerfile-")
    try:
        build_name = build_stage(repository, all_stages[0], root)
        if not failures:
            binaries = check_runtime(all_stages[-1], build_name, root)
            check_librdkafka(repository, all_stages, binaries)
        check_healthcheck(all_stages[-1])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if not failures:
        docker_build(repository)
    if failures:
        print("dockerfile_test: %d failure(s)" % len(failures), file=sys.stderr)
        return 1
    print("dockerfile_test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
