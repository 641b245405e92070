"""What the web service adds around translation: health and readiness, metrics, logs, rate limits, sign-in, history, HTTP guards."""
