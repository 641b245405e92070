"""What hymt-chat keeps in a database of its own: the translation memory (and the mechanism the
API keys share)."""
