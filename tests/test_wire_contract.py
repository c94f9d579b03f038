"""The wire contract (server/botbin/wire) and the TypeScript types generated from it: the checked-in
extensions/protocol/src/generated.ts is what the generator writes, a removed field is caught, and the payloads
the server builds are the contract's shapes."""

from __future__ import annotations

import copy
import difflib
import os
import subprocess
import sys

import pytest
from pydantic import ValidationError

from botbin.errors import (
    LockedError,
    ModelError,
    PassphraseError,
    StorageError,
    WorkspaceError,
    WrongPassphraseError,
)
from botbin.wire import status
from botbin.wire.errors import kind_of
from botbin.wire.schema import contract_schema
from botbin.wire.typescript import generate
from conftest import REPO

GENERATED = REPO / "extensions" / "protocol" / "src" / "generated.ts"


def test_the_checked_in_typescript_is_what_the_contract_generates() -> None:
    assert GENERATED.read_text(encoding="utf-8") == generate(), "run: python scripts/gen_protocol.py"


def test_the_check_script_passes_on_the_checked_in_file() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "server")}
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gen_protocol.py"), "--check"], env=env, capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode()


def test_a_removed_field_is_caught() -> None:
    """Drop ``tracked`` from a folder's status (the drift issue 22 found): the generated TypeScript no longer
    matches the checked-in file, and the line that differs is that field."""
    schema = copy.deepcopy(contract_schema())
    del schema["$defs"]["FolderStatus"]["properties"]["tracked"]
    schema["$defs"]["FolderStatus"]["required"].remove("tracked")
    drifted = generate(schema)
    assert drifted != GENERATED.read_text(encoding="utf-8")
    diff = difflib.unified_diff(GENERATED.read_text(encoding="utf-8").splitlines(), drifted.splitlines(), n=0)
    assert [line for line in diff if line.startswith("-") and not line.startswith("---")] == [
        "-  /** Tracked notes on disk now. */",
        "-  tracked: number;",
    ]


def test_a_payload_missing_a_field_is_rejected() -> None:
    fields = {
        "workspace": "/ws",
        "output_dir": None,
        "state_file": None,
        "model": None,
        "files": 0,
        "chunks": 0,
        "last_sync": None,
        "stale": [],
        "warnings": ["locked"],
        "conflicts": [],
        "encryption": "on",
    }
    with pytest.raises(ValidationError, match="tracked"):
        status.WorkspaceStatus.model_validate(fields)
    assert status.WorkspaceStatus.model_validate({**fields, "tracked": 0}).tracked == 0


def test_results_send_every_field_and_params_may_leave_defaults_out() -> None:
    defs = contract_schema()["$defs"]
    assert set(defs["SearchResult"]["required"]) == {"hits", "indexedAt", "indexing", "degraded", "stale", "hidden"}
    assert defs["SearchRequest"]["required"] == ["query"]
    assert "tracked" in defs["FolderStatus"]["required"] and "lastErrorKind" in defs["FolderStatus"]["required"]


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (PassphraseError("this store is encrypted; give its passphrase"), "locked"),
        (WrongPassphraseError("wrong passphrase for this encrypted store"), "wrong_passphrase"),
        (ModelError("no model"), "model_unavailable"),
        (WorkspaceError("gone"), "workspace_missing"),
        (LockedError("held"), "busy"),
        (StorageError("cannot write (the disk is full)"), "storage"),
        (RuntimeError("a bug"), "internal"),
    ],
)
def test_error_kinds_come_from_the_error_classes(error: BaseException, kind: str) -> None:
    assert kind_of(error) == kind


def test_the_checked_in_python_host_types_are_what_the_contract_generates() -> None:
    from botbin.wire.python_client import generate as generate_python

    checked_in = REPO / "server" / "botbin" / "cli" / "host_types.py"
    assert checked_in.read_text(encoding="utf-8") == generate_python(), "run: python scripts/gen_protocol.py"
