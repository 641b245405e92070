"""The model server on this host: profiles, launch, supervisor, the demo model, where it listens, what it can run, doctor and deploy files."""
