"""Text in and out: cleanup of what users paste, segmentation, and the model's answers tidied."""
