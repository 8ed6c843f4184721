"""Command-line tools: ktile (subcommands, e.g. `ktile cocheck`), ktile-opt and ktile-translate."""
