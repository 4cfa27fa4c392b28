# The dedup-worker image: `docker compose up` runs it with replicas (see docker-compose.yml).

# The native extension (native/) as a wheel, built with Debian's Rust: bookworm's rustc-web
# (its plain rustc is older than pyo3 supports), or a later Debian's rustc. Only the wheel
# leaves this stage: the image itself needs no compiler.
FROM python:3.11-slim AS native
RUN apt-get update -qq \
    && { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
           rustc-web cargo-web \
         || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
           rustc cargo; } \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /native
COPY native ./
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

# Every other dependency installs from a wheel, and a build that copies a virtualenv measured
# no smaller (docs/operations.md, "Deploy").
FROM python:3.11-slim
LABEL org.opencontainers.image.title="dedup-worker" \
      org.opencontainers.image.description="Near-duplicate detection for live text streams" \
      org.opencontainers.image.licenses="MIT"
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY worker ./worker
COPY --from=native /wheels /wheels
# The package, its runtime dependencies and the native extension only: no test, evaluation or
# development extras.
RUN pip install --no-cache-dir . /wheels/*.whl \
    && rm -rf /src /wheels \
    && useradd --system --uid 10001 --no-create-home --home-dir /nonexistent dedup
# Not root. The worker writes nothing but faust's empty data folder, in the temporary
# directory: with a read-only root file system, only /tmp needs to be writable.
USER 10001
WORKDIR /tmp
EXPOSE 8080
# docker stop and Kubernetes send SIGTERM: the worker finishes the batch in hand, sends its
# output, commits its offsets and exits with status 0.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=5s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/readyz', timeout=3)"]
ENTRYPOINT ["dedup-worker"]
CMD ["worker"]
