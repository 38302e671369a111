"""Print the HTTP API's OpenAPI schema (what `/openapi.json` answers), from an app over
a throwaway store: `make types` turns it into the page's JSDoc types."""

import json
import sys
import tempfile
from pathlib import Path

import loomdb
from loomdb.server import create_app
from loomdb.settings import Settings

with tempfile.TemporaryDirectory() as folder, \
        loomdb.open(str(Path(folder) / "store"), settings=Settings()) as lm:
    json.dump(create_app(lm).openapi(), sys.stdout, indent=1, sort_keys=True)
