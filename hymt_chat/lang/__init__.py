"""Languages: the 38 the models speak, their names and codes, and detection."""
