"""The `hymt-chat` command: translate, detect, the sidecar and deploy subcommands."""
