"""`python -m agent.tools.refresh_schemas`: write input_schemas.json from the tools' models.

Run it after changing a tool's input model (a test says when the file is out of date).
"""

from __future__ import annotations

from agent.tools.input_schemas import SCHEMAS_FILE, render
from agent.tools.registry import model_schemas


def main() -> None:
    SCHEMAS_FILE.write_text(render(model_schemas()), encoding="utf-8")
    print(f"wrote {SCHEMAS_FILE}")


if __name__ == "__main__":
    main()
