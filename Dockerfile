# syntax=docker/dockerfile:1
# Triage: the Slack bot, as a small non-root image.
#   docker build -t triage:0.1.0 .
#   docker run --rm -e SLACK_BOT_TOKEN=... -e SLACK_APP_TOKEN=... -p 3000:3000 triage:0.1.0
# The entrypoint is `triage serve`; arguments after the image name go to it (--port, --scenario).

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --- build: the project's wheel and every dependency, installed into a virtual environment ---
FROM ${PYTHON_IMAGE} AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY engines ./engines
COPY tools ./tools
RUN pip wheel --no-deps --wheel-dir /dist . \
 && python -m venv --without-pip /opt/triage \
 && pip --python /opt/triage/bin/python install /dist/*.whl \
 && /opt/triage/bin/python -m compileall -q /opt/triage/lib

# --- runtime: the virtual environment on a clean base, no compilers, pip or build tools ---
FROM ${PYTHON_IMAGE}
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="triage" \
      org.opencontainers.image.description="A Slack bot that troubleshoots Kubernetes incidents" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN python -m pip uninstall --yes --quiet pip setuptools wheel \
 && groupadd --system --gid 10001 triage \
 && useradd --system --uid 10001 --gid triage --home-dir /var/lib/triage --no-create-home \
      --shell /usr/sbin/nologin triage \
 && install -d -o triage -g triage -m 0750 /var/lib/triage
COPY --from=build /opt/triage /opt/triage
ENV PATH=/opt/triage/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HOME=/var/lib/triage \
    XDG_DATA_HOME=/var/lib/triage \
    MPLCONFIGDIR=/tmp/matplotlib
WORKDIR /var/lib/triage
USER 10001:10001
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:3000/healthz', timeout=2)"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["triage", "serve"]
CMD ["--port", "3000"]
