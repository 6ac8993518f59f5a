"""`python -m vask_server.cli`: the `vask` command."""

import sys

from vask_server.cli.command import main

sys.exit(main())
