"""Talking to the model: prompts, the translator, the policy (priority, window, fair queue, retries), the client, Best quality."""
