"""Voice: speech in (a recogniser, Whisper) and speech out (Piper or espeak-ng), for the pages
that let people talk instead of type. Nothing here imports Chainlit; the Runtime owns one
:class:`~hymt_chat.speech.service.Speech` and the sessions and room pages use it."""
