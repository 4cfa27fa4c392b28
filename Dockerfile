# The dedup-worker image: `docker compose up` runs it with replicas (see docker-compose.yml).
# One stage: every dependency installs from a wheel (no compiler is needed), and a two-stage
# build that copies a virtualenv measured no smaller (docs/operations.md, "Deploy").
FROM python:3.11-slim
LABEL org.opencontainers.image.title="dedup-worker" \
      org.opencontainers.image.description="Near-duplicate detection for live text streams" \
      org.opencontainers.image.licenses="MIT"
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY worker ./worker
# The package and its runtime dependencies only: no test, evaluation or development extras.
RUN pip install --no-cache-dir . \
    && rm -rf /src \
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
