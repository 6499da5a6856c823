"""`python -m agent`: the headless CLI without Textual."""

from __future__ import annotations

import sys

from agent.cli.main import main

sys.exit(main())
