# hippo serve in a container: the HTTP API, the dashboard and the MCP server, with the local model
# (docs/guide/container.md). Build from a checkout:
#   docker build -t hippo-memory .        (or podman build --format docker, which keeps the HEALTHCHECK)
# Any Debian-like base with python3 (3.11 or newer) and its venv module works, e.g.
#   --build-arg BASE=debian-with-python:bookworm (the tests build one from Debian's packages).
ARG BASE=python:3.12-slim
FROM ${BASE}

# pip's way to PyPI when it is not the direct one: a mirror (PIP_INDEX_URL), a proxy's certificate
# authority (PIP_CERT, a path the build can read: podman build -v /host/ca.pem:/run/ca.pem:ro). Build
# arguments only: none of them stays in the image.
ARG PIP_INDEX_URL
ARG PIP_EXTRA_INDEX_URL
ARG PIP_TRUSTED_HOST
ARG PIP_CERT
ARG PIP_DEFAULT_TIMEOUT

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# The user the server runs as: no root inside the container, a fixed uid for volume permissions.
RUN useradd --uid 10001 --user-group --home-dir /home/hippo --create-home --shell /usr/sbin/nologin hippo \
 && mkdir -p /data && chown hippo:hippo /data

# hippo from this checkout (not PyPI's), with the extras serving needs, in its own environment.
COPY pyproject.toml README.md LICENSE /tmp/hippo-src/
COPY src /tmp/hippo-src/src
# An argument not given must be unset, not empty: pip would take an empty PIP_INDEX_URL as its index.
RUN for name in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST PIP_CERT PIP_DEFAULT_TIMEOUT; do \
        [ -n "$(printenv "$name")" ] || unset "$name"; \
    done \
 && python3 -m venv /opt/hippo \
 && /opt/hippo/bin/python -m pip install --quiet "/tmp/hippo-src[local,cli,http,mcp,postgres]" \
 && rm -rf /tmp/hippo-src

ENV PATH=/opt/hippo/bin:$PATH \
    HIPPO_DB=/data/hippo.db

USER hippo
WORKDIR /data
# The local model ships inside a package: check its files and run it once, so a broken image fails
# here and not at the first request.
RUN hippo prepare

VOLUME /data
EXPOSE 8000
# /healthz answers while the server is up; python, since the base may have no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["/opt/hippo/bin/python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]
# Serving on 0.0.0.0 needs an API key in the database first (hippo refuses otherwise):
#   docker run --rm -v hippo-data:/data hippo-memory hippo keys create --admin
CMD ["hippo", "serve", "--host", "0.0.0.0", "--port", "8000"]
