# hymt-chat's chat app (the Chainlit front and the core). The model server is NOT in here: it
# runs from the official vLLM image (compose.yaml, deploy/k8s/) and is reached at HYMT_BASE_URL.
#   docker build -t hymt-chat .
#   docker run --read-only --tmpfs /tmp -v hymt-data:/home/app/.cache/hymt-chat -p 8000:8000 \
#     -e HYMT_BASE_URL=http://gpu-host:8000/v1 -e HYMT_API_KEY=... hymt-chat
# Another port: -e CHAINLIT_PORT=9000 (the server and the HEALTHCHECK both read it).
# No `# syntax=` line: it would make every BuildKit build fetch a frontend image from a registry.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# uv (pinned: scripts/setup.sh and the lock's dev tools use the same) only turns uv.lock into a
# hashed requirements list; pip installs exactly that.
ARG UV_VERSION=0.13.8
RUN python -m venv /opt/uv && /opt/uv/bin/pip install --no-cache-dir "uv==${UV_VERSION}"
WORKDIR /src
# Only the lock and the project file first, so that this layer (the downloads) stays cached
# until the dependencies change.
COPY pyproject.toml uv.lock ./
# The app's runtime dependencies only (no test, bench or vLLM extras), at the locked versions.
RUN /opt/uv/bin/uv export --frozen --no-dev --no-emit-project --no-header \
        --format requirements-txt -o requirements.txt \
    && python -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-cache-dir --require-hashes --no-deps -r requirements.txt
COPY README.md ./
COPY hymt_chat ./hymt_chat
RUN /opt/venv/bin/pip install --no-cache-dir --no-deps .

FROM python:3.11-slim
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HYMT_CACHE_DIR=/home/app/.cache/hymt-chat \
    CHAINLIT_HOST=0.0.0.0 \
    CHAINLIT_PORT=8000
# The runtime user owns nothing of the code (root's, read-only to it): only its home and its
# cache (a volume), which holds Chainlit's uploads too (<cache>/chainlit-files/<pid>-<random>/).
# /app/.files stays, empty and root's: importing chainlit.config makes it (mkdir, exist_ok),
# which an existing folder satisfies on a read-only root; the app points Chainlit elsewhere.
RUN groupadd --gid 10001 app \
    && useradd --no-create-home --home-dir /home/app --uid 10001 --gid app \
        --shell /usr/sbin/nologin app \
    && install -d -o app -g app -m 0700 /home/app /home/app/.cache /home/app/.cache/hymt-chat \
    && install -d -m 0755 /app /app/.files
COPY --from=build /opt/venv /opt/venv
WORKDIR /app
COPY app.py presenter.py chainlit_edge.py chainlit*.md ./
COPY .chainlit ./.chainlit
COPY public ./public
USER 10001:10001
EXPOSE 8000
# 200 once the model answers (the app's /health reflects vLLM's), 503 while it loads or is down.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health' % os.environ.get('CHAINLIT_PORT', '8000'), timeout=4)"]
# HYMT_BASE_URL and HYMT_API_KEY come from the environment (compose.yaml sets them); the host
# and port from CHAINLIT_HOST and CHAINLIT_PORT above.
CMD ["chainlit", "run", "app.py", "-h"]
