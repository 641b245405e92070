"""``GET /libretranslate/spec``: the Swagger 2.0 document of our LibreTranslate endpoints.

Shaped like LibreTranslate's own ``/spec`` (flask-swagger's document of the YAML in its routes'
docstrings, libretranslate/app.py of LibreTranslate/LibreTranslate: ``swagger: "2.0"``, ``info``
with title, version, description and license, ``basePath``, ``paths`` whose parameters are
``formData``, and ``definitions`` named by the docstrings' schema ids), so that a tool reading
theirs reads ours. It describes what this server does, not LibreTranslate's options: ``q`` one
text or a list, ``alternatives`` up to :data:`~hymt_chat.api.work.MAX_ALTERNATIVES`, suggestions
off (403), files in the formats the app reads.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PATHS", "libre_spec"]

_ERROR = {"$ref": "#/definitions/error-response"}


def _param(name: str, kind: str, description: str, *, required: bool = False,
           example: object = None, **extra: object) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": kind, **extra}
    if example is not None:
        schema["example"] = example
    return {"in": "formData", "name": name, "schema": schema, "required": required,
            "description": description}


_KEY = _param("api_key", "string", "API key", example="hymt-xxxxxxxx")


def _errors(*codes: int) -> dict[str, Any]:
    words = {400: "Invalid request", 403: "Banned", 429: "Slow down", 500: "Translation error"}
    return {str(c): {"description": words[c],
                     "schema": {"$ref": "#/definitions/error-slow-down"} if c == 429 else _ERROR}
            for c in codes}


def _ok(description: str, definition: str) -> dict[str, Any]:
    return {"200": {"description": description,
                    "schema": {"$ref": f"#/definitions/{definition}"}}}


_DETECTED = {"type": "object", "properties": {
    "confidence": {"type": "number", "format": "float", "minimum": 0, "maximum": 100,
                   "description": "Confidence value", "example": 100},
    "language": {"type": "string", "description": "Language code", "example": "en"}}}
_LANGUAGE: dict[str, Any] = {"type": "object", "properties": {
    "code": {"type": "string", "description": "Language code"},
    "name": {"type": "string", "description": "Human-readable language name (in English)"}}}

# hymt-chat's own field (LibreTranslate has none): what the checks found wrong, per text.
_FLAGS = {"type": "array", "description": "hymt-chat: what the checks of the translation "
          "found (empty: every check passed)", "items": {"type": "object", "properties": {
              "kind": {"type": "string", "description": "What was checked (date, amount…)"},
              "message": {"type": "string", "description": "The finding, in a sentence"}}}}

_DEFINITIONS: dict[str, Any] = {
    "translate": {"type": "object", "required": ["translatedText"], "properties": {
        "translatedText": {"oneOf": [{"type": "string"}, {"type": "array"}],
                           "description": "Translated text(s)"},
        "detectedLanguage": {"oneOf": [_DETECTED, {"type": "array", "items": _DETECTED}]},
        "alternatives": {"oneOf": [
            {"type": "array", "items": {"type": "string"}},
            {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}],
            "description": "Alternative translations"},
        "hymt_flags": {"oneOf": [_FLAGS, {"type": "array", "items": _FLAGS}]}}},
    "detections": {"type": "array", "items": _DETECTED},
    "languages": {"type": "array", "items": {"type": "object", "description": "Supported language",
                                             "properties": {
        **_LANGUAGE["properties"],
        "targets": {"type": "array", "items": {"type": "string"},
                    "description": "Supported target language codes"}}}},
    "translate-file": {"type": "object", "properties": {
        "translatedFileUrl": {"type": "string", "description": "Translated file url"},
        "hymt_flags": _FLAGS}},
    "frontend-settings": {"type": "object", "properties": {
        "charLimit": {"type": "integer", "description": "Character input limit for this "
                      "language (-1 indicates no limit)"},
        "frontendTimeout": {"type": "integer", "description": "Frontend translation timeout"},
        "apiKeys": {"type": "boolean", "description": "Whether the API key database is enabled."},
        "keyRequired": {"type": "boolean", "description": "Whether an API key is required."},
        "suggestions": {"type": "boolean",
                        "description": "Whether submitting suggestions is enabled."},
        "filesTranslation": {"type": "boolean", "description": "Whether files translation "
                             "is enabled."},
        "supportedFilesFormat": {"type": "array", "items": {"type": "string"},
                                 "description": "Supported files format"},
        "language": {"type": "object", "properties": {"source": _LANGUAGE,
                                                      "target": _LANGUAGE}}}},
    "suggest-response": {"type": "object", "properties": {
        "success": {"type": "boolean", "description": "Whether submission was successful"}}},
    "health-response": {"type": "object", "properties": {
        "status": {"type": "string", "description": "Health status", "example": "ok"}}},
    "error-response": {"type": "object", "properties": {
        "error": {"type": "string", "description": "Error message"}}},
    "error-slow-down": {"type": "object", "properties": {
        "error": {"type": "string", "description": "Reason for slow down"}}},
}


def _paths(max_alternatives: int) -> dict[str, Any]:
    text = _param("q", "string", "Text(s) to translate", required=True, example="Hello world!")
    text["schema"] = {"oneOf": [{"type": "string", "example": "Hello world!"},
                                {"type": "array", "example": ["Hello world!"]}]}
    source = _param("source", "string", 'Source language code or "auto" for auto detection',
                    required=True, example="en")
    target = _param("target", "string", "Target language code", required=True, example="es")
    return {
        "/translate": {"post": {
            "tags": ["translate"], "summary": "Translate Text",
            "parameters": [text, source, target,
                           _param("format", "string", "Format of source text: `text` - plain "
                                  "text, `html` - HTML markup", enum=["text", "html"],
                                  default="text", example="text"),
                           _param("alternatives", "integer", "Preferred number of alternative "
                                  f"translations (at most {max_alternatives}; plain text only)",
                                  default=0, example=3),
                           _KEY],
            "responses": {**_ok("Translation", "translate"), **_errors(400, 500, 429, 403)}}},
        "/translate_file": {"post": {
            "tags": ["translate"], "summary": "Translate a File",
            "consumes": ["multipart/form-data"],
            "parameters": [{"in": "formData", "name": "file", "type": "file", "required": True,
                            "description": "File to translate"}, source, target, _KEY],
            "responses": {**_ok("Translated file", "translate-file"),
                          **_errors(400, 500, 429, 403)}}},
        "/detect": {"post": {
            "tags": ["translate"], "summary": "Detect Language of Text",
            "parameters": [_param("q", "string", "Text to detect", required=True,
                                  example="What language is this?"), _KEY],
            "responses": {**_ok("Detections", "detections"), **_errors(400, 500, 429, 403)}}},
        "/languages": {"get": {
            "tags": ["translate"], "summary": "Get Supported Languages",
            "responses": _ok("List of supported languages", "languages")}},
        "/frontend/settings": {"get": {
            "tags": ["misc"], "summary": "Retrieve Frontend Settings",
            "responses": _ok("frontend settings", "frontend-settings")}},
        "/suggest": {"post": {
            "tags": ["misc"], "summary": "Submit a Suggestion to Improve a Translation "
            "(disabled here: always 403)",
            "parameters": [_param("q", "string", "Original text", required=True),
                           _param("s", "string", "Suggested translation", required=True),
                           _param("source", "string", "Language of original text",
                                  required=True),
                           _param("target", "string", "Language of suggested translation",
                                  required=True)],
            "responses": {**_ok("Success", "suggest-response"),
                          "403": {"description": "Not authorized", "schema": _ERROR}}}},
        "/health": {"get": {
            "tags": ["misc"], "summary": "Health Check",
            "responses": _ok("Service is healthy", "health-response")}},
    }


PATHS = tuple(_paths(0))  # the endpoints the document describes (each under basePath)


def libre_spec(base_path: str, version: str, max_alternatives: int) -> dict[str, Any]:
    """The document, its endpoints under *base_path* (``/libretranslate``)."""
    return {
        "swagger": "2.0",
        "info": {"title": "LibreTranslate", "version": version,
                 "description": "LibreTranslate-compatible machine translation API of "
                                "hymt-chat (Hunyuan-MT).",
                 "license": {"name": "Apache-2.0"}},  # ours (LibreTranslate: AGPL-3.0)
        "basePath": base_path,
        "paths": _paths(max_alternatives),
        "definitions": _DEFINITIONS,
    }
