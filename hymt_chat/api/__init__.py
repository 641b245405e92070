"""LibreTranslate- and DeepL-compatible HTTP APIs over the one translator (``routes.mount``)."""
