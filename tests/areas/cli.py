"""The CLI as the areas' tests drive it: JSON out, exit codes checked."""

from __future__ import annotations

import json
from typing import Any

from test_bad_input import run_cli


class Cli:
    def __init__(self, db: str) -> None:
        self.db = db

    def __call__(self, *args: str) -> Any:
        code, out, err = run_cli(self.db, *args, "--json")
        assert code == 0, err
        return json.loads(out)

    def fails(self, *args: str) -> str:
        code, out, err = run_cli(self.db, *args, "--json")
        assert code == 2, (code, out, err)
        assert "Traceback" not in err
        error = json.loads(out)["error"]
        assert error["type"] and err.startswith("loomdb: error: ")
        message: str = error["message"]
        return message
