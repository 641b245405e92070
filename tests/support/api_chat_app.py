"""A Chainlit app that mounts the API exactly as app.py is to (a stand-in until the lead wires
``mount`` into app.py): Chainlit's own server, with its catch-all page route, plus the API."""

import chainlit as cl
from chainlit.server import app as server

from hymt_chat.api.routes import mount
from hymt_chat.engine.translator import Translator
from hymt_chat.service.metrics import get_metrics
from hymt_chat.settings import get_settings

SETTINGS = get_settings()
METRICS = get_metrics(SETTINGS)
TRANSLATOR = METRICS.instrument(Translator(SETTINGS))
mount(server, TRANSLATOR, SETTINGS, metrics=METRICS)  # the lines app.py is to add


@cl.on_message
async def echo(message: cl.Message) -> None:
    await cl.Message(content=message.content).send()
