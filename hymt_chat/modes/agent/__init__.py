"""The Support agent mode: the conversation, its turns, glossary, masking, drift check and transcripts."""
