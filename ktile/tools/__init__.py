"""Command-line tools: ktile-opt and ktile-translate."""
