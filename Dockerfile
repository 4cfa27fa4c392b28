# The dedup-worker image: `docker compose up` runs it with replicas (see docker-compose.yml).
FROM python:3.11-slim

WORKDIR /app
COPY pyproject.toml README.md ./
COPY worker ./worker
RUN pip install --no-cache-dir . && useradd --system --uid 10001 dedup
USER dedup

ENTRYPOINT ["dedup-worker"]
CMD ["worker"]
