"""`python -m ktile.runtime.cocheck FILE...`: the same as `ktile cocheck FILE...`."""
import sys

from .cli import main

sys.exit(main(prog="python -m ktile.runtime.cocheck"))
