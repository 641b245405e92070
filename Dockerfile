# syntax=docker/dockerfile:1
# hymt-chat's chat app (the Chainlit front and the core). The model server is NOT in here: it
# runs from the official vLLM image (compose.yaml, deploy/k8s/) and is reached at HYMT_BASE_URL.
#   docker build -t hymt-chat .
#   docker run -p 8000:8000 -e HYMT_BASE_URL=http://gpu-host:8000/v1 -e HYMT_API_KEY=... hymt-chat

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY hymt_chat ./hymt_chat
# The app's runtime dependencies only: no test, bench or vLLM extras.
RUN python -m venv /opt/venv && /opt/venv/bin/pip install --no-cache-dir .

FROM python:3.11-slim
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HYMT_CACHE_DIR=/home/app/.cache/hymt-chat
RUN groupadd --gid 10001 app \
    && useradd --create-home --uid 10001 --gid app --shell /usr/sbin/nologin app \
    && install -d -o app -g app /app /home/app/.cache/hymt-chat
COPY --from=build /opt/venv /opt/venv
WORKDIR /app
COPY --chown=app:app app.py presenter.py chainlit*.md ./
COPY --chown=app:app .chainlit ./.chainlit
COPY --chown=app:app public ./public
USER 10001:10001
EXPOSE 8000
# 200 once the model answers (the app's /health reflects vLLM's), 503 while it loads or is down.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=4)"]
# HYMT_BASE_URL and HYMT_API_KEY come from the environment (compose.yaml sets them).
CMD ["chainlit", "run", "app.py", "-h", "--host", "0.0.0.0", "--port", "8000"]
