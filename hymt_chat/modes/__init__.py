"""The chat page's modes: Translator, Support agent, Kiosk and documents, as state and decisions without Chainlit."""
