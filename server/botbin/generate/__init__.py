"""The files of the repository written out of one Python source each, and the one list of them:
``python scripts/gen_protocol.py`` writes them, ``--check`` (and tests/test_generated.py) fails when one drifted."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Target:
    """One generated file."""

    path: str
    """Its path relative to the repository root (POSIX)."""
    make: Callable[[str], str]
    """The file's text from its current text ("" when it does not exist yet): a file generated in part (README.md,
    package.json) keeps what is not generated."""
    source: str
    """Where to edit instead, for the message of a stale file."""
    as_json: bool = False
    """Compared as JSON data (prettier may lay the text out its own way)."""

    def stale(self, current: str) -> bool:
        """True when ``current`` is not what this target generates."""
        made = self.make(current)
        return json.loads(current or "null") != json.loads(made) if self.as_json else current != made


def targets() -> tuple[Target, ...]:
    """Every generated file (imports the server's modules they are made from)."""
    from botbin.generate import readme, settings_docs, typescript_values
    from botbin.wire import python_client, typescript

    registry = Path(__file__).resolve().parents[3] / "bench" / "registry.py"  # in a checkout, not in a wheel
    bench = (
        (Target("bench/README.md", lambda text: readme.bench_readme(text, registry), "bench/registry.py"),)
        if registry.is_file()
        else ()
    )
    return (
        *bench,
        Target("extensions/protocol/src/generated.ts", lambda _: typescript.generate(), "server/botbin/wire/"),
        Target(
            "extensions/protocol/src/names.ts", lambda _: typescript_values.names_ts(), "server/botbin/lsp/protocol.py"
        ),
        Target(
            "extensions/protocol/src/values.ts",
            lambda _: typescript_values.values_ts(),
            "server/botbin/config_model.py",
        ),
        Target("server/botbin/cli/host_types.py", lambda _: python_client.generate(), "server/botbin/wire/hosts.py"),
        Target("README.md", readme.readme, "server/botbin/config_model.py, server/botbin/cli/common.py"),
        Target(
            "extensions/vscode/package.json",
            settings_docs.vscode_manifest,
            "server/botbin/config_model.py",
            as_json=True,
        ),
    )
