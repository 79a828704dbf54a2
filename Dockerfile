# outbox-publisher image: the publisher and the consumer kit's example service
# (outbox-paid-orders), built from this repository on Debian bookworm and run on
# bookworm-slim with only the runtime libraries. librdkafka is the pinned release
# (packaging/librdkafka.env), built from Debian's source package by
# scripts/fetch-librdkafka.sh and linked statically, as in every test build: the
# image installs no librdkafka of Debian's.
#
# tests/packaging/dockerfile_test.py copies exactly what the COPY lines below copy
# into an empty folder and runs the build stage's commands there, and checks that
# the runtime stage installs every shared library the binaries load: keep the build
# commands relative to the working directory.
FROM debian:bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake pkg-config \
      curl ca-certificates libpq-dev libprotobuf-dev protobuf-compiler libabsl-dev \
      nlohmann-json3-dev libcpp-httplib-dev \
      libcurl4-openssl-dev liblz4-dev libsasl2-dev libssl-dev libzstd-dev zlib1g-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt README.md CHANGELOG.md ./
COPY scripts/schema.sql scripts/schema.sql
COPY scripts/fetch-librdkafka.sh scripts/fetch-librdkafka.sh
COPY packaging packaging
COPY deploy/systemd deploy/systemd
COPY cdc cdc
COPY common common
COPY proto proto
COPY publisher publisher
COPY consumer consumer
COPY examples/paid_orders examples/paid_orders
# The same install rules as the Debian package (CMakeLists.txt, "install rules"),
# their runtime component alone: no systemd unit in an image. Configuring builds
# the pinned librdkafka first (about a minute and a half).
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DOUTBOX_TESTS=OFF \
 && cmake --build build -j"$(nproc)" --target outbox-publisher outbox-paid-orders \
 && cmake --install build --component runtime --prefix install --strip

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends libpq5 libprotobuf32 \
      libabsl20220623 libcpp-httplib0.11 ca-certificates \
      libcurl4 liblz4-1 libsasl2-2 libssl3 libzstd1 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/install/bin/outbox-publisher /usr/local/bin/outbox-publisher
COPY --from=build /src/install/bin/outbox-paid-orders /usr/local/bin/outbox-paid-orders
# A numeric user, so Kubernetes' runAsNonRoot can verify it (nobody:nogroup).
USER 65534:65534
# /metrics, /healthz, /readyz and /livez (docs/operations.md). Set
# OUTBOX_METRICS_PORT=0 to turn the server off; the health check then fails, so
# turn it off with it.
ENV OUTBOX_METRICS_PORT=9187 \
    OUTBOX_METRICS_ADDRESS=0.0.0.0
EXPOSE 9187
# The image has no HTTP client: bash's /dev/tcp asks /readyz, which answers 200
# for the active publisher while it streams and acknowledgements progress, and for
# a standby while it could take over (PostgreSQL and the brokers answer).
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/${OUTBOX_METRICS_PORT:-9187} && printf 'GET /readyz HTTP/1.0\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]
# Configuration comes from OUTBOX_* variables (docs/configuration.md); logs go
# to stderr. The consumer example: --entrypoint outbox-paid-orders.
ENTRYPOINT ["/usr/local/bin/outbox-publisher"]
