# outbox-publisher image: built from this repository on Debian bookworm, run on
# bookworm-slim with only the runtime libraries.
FROM debian:bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake pkg-config \
      libpq-dev librdkafka-dev libprotobuf-dev protobuf-compiler libabsl-dev \
      nlohmann-json3-dev libcpp-httplib-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY cdc cdc
COPY proto proto
COPY publisher publisher
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=Release -DOUTBOX_TESTS=OFF \
 && cmake --build /build -j"$(nproc)" --target outbox-publisher

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends libpq5 librdkafka1 libprotobuf32 \
      libabsl20220623 libcpp-httplib0.11 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/outbox-publisher /usr/local/bin/outbox-publisher
USER nobody
# Configuration comes from OUTBOX_* variables (see README); logs go to stderr.
ENTRYPOINT ["/usr/local/bin/outbox-publisher"]
