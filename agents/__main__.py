"""`python -m agents ...` is `farm agent ...`."""

import argparse
import sys

from agents import cli

parser = argparse.ArgumentParser(prog="python -m agents", description=cli.__doc__)
cli.add_arguments(parser)
sys.exit(cli.run(parser.parse_args()))
