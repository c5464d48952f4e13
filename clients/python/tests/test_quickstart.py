import os
import subprocess
import sys
import unittest
from pathlib import Path

from .support import env, unique

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
EXAMPLE = EXAMPLES / "quickstart.py"
DOCS = EXAMPLES.parents[2] / "docs"


class QuickstartTest(unittest.TestCase):
    def test_the_documented_example_runs(self) -> None:
        package_root = str(EXAMPLE.parent.parent)
        run = subprocess.run(
            [sys.executable, str(EXAMPLE)],
            env={**os.environ, "MNEMO_URL": env("MNEMO_URL"), "MNEMO_KEY": env("MNEMO_KEY"), "MNEMO_WORKSPACE": unique("quickstart"),
                 "PYTHONPATH": package_root},
            capture_output=True, text=True, timeout=60,
        )
        self.assertEqual(run.returncode, 0, run.stderr)
        lines = run.stdout.splitlines()
        self.assertRegex(lines[0], r"^stored [0-9a-f-]{36}$")
        self.assertEqual(lines[1:], ["best match: Release process", "event: memory.created True", "error: MEMORY_NOT_FOUND 404"])

    def test_the_docs_show_the_examples_as_they_run(self) -> None:
        # Each example without its docstring, as docs/clients-python.md shows it (or the clients page it is merged into).
        pages = [p.read_text(encoding="utf-8") for p in (DOCS / "clients-python.md", DOCS / "clients.md") if p.exists()]
        for example in sorted(EXAMPLES.glob("*.py")):
            code = example.read_text(encoding="utf-8").split('"""', 2)[2].strip()
            self.assertTrue(any(code in page for page in pages), f"no page of {DOCS} shows examples/{example.name} as it is")


if __name__ == "__main__":
    unittest.main()
