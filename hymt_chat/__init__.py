"""hymt-chat: live translation between 38 languages with Hunyuan-MT-7B."""

__version__ = "0.1.0"
