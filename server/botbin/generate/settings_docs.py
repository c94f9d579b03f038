"""What people read of the settings, written out of the settings model (config_model.py, config_experimental.py):
README.md's settings tables (between two marker lines) and the settings VS Code's package.json contributes."""

from __future__ import annotations

import json
from typing import Any

from botbin.config import CONFIG_FILE, EXPERIMENTAL_TABLE, FIELDS
from botbin.config_experimental import ExperimentalSettings
from botbin.config_model import SECTIONS, Section, range_text, shown_default
from botbin.generate.typescript_values import editor_key, editor_type, json_bounds
from botbin.wire.settings import editor_keys

#: What VS Code's settings add to each generated description.
PREFIX = "botbin."


def _table(section: type[Section]) -> list[str]:
    rows = ["| key | default | range | meaning |", "|---|---|---|---|"]
    for key, field in section.model_fields.items():
        meaning = str(field.description).replace("|", r"\|")
        rows.append(f"| `{key}` | {shown_default(field)} | {range_text(field)} | {meaning} |")
    return rows


def readme_block() -> str:
    """README.md's settings tables, a section each."""
    lines: list[str] = []
    for title, section in SECTIONS:
        lines += ["", f"**{title}.** {_sentence(section)}", "", *_table(section)]
    lines += [
        "",
        f"**Experimental.** {_sentence(ExperimentalSettings)} Benchmarks chose these values (bench/README.md); set them"
        f" under `[{EXPERIMENTAL_TABLE}]` in `{CONFIG_FILE}` (a key of an older file at the top level still applies,"
        " with a warning). `BOTBIN_<KEY>` sets them too.",
        "",
        *_table(ExperimentalSettings),
        "",
    ]
    return "\n".join(lines)


def _sentence(section: type[Section]) -> str:
    return (section.__doc__ or "").strip().splitlines()[0]


def vscode_property(key: str) -> dict[str, Any]:
    """The ``contributes.configuration.properties`` entry of an editor setting: unset (null) by default, so
    that botbin.toml decides."""
    field = FIELDS[key]
    kind = {"globs": "array"}.get(editor_type(key), editor_type(key))
    entry: dict[str, Any] = {"type": [kind, "null"]}
    if kind == "array":
        entry["items"] = {"type": "string"}
    entry.update(json_bounds(field))
    description = str(field.description)
    entry["default"] = None
    entry["markdownDescription"] = (
        f"{description[0].upper()}{description[1:]}, like `{key}` in `{CONFIG_FILE}`. "
        f"Unset: `{CONFIG_FILE}`'s value, else {shown_default(field)}."
    )
    return entry


def vscode_manifest(current: str) -> str:
    """extensions/vscode/package.json with the settings of ``editor_keys`` generated anew in place (the
    extension's own settings, server.path and the like, kept as they are)."""
    manifest = json.loads(current)
    properties: dict[str, Any] = manifest["contributes"]["configuration"]["properties"]
    generated = {PREFIX + editor_key(key): vscode_property(key) for key in editor_keys()}
    model = {PREFIX + editor_key(key) for key in FIELDS}
    kept = [name for name in properties if name not in model or name in generated]
    new = [name for name in generated if name not in properties]
    last = max((i for i, name in enumerate(kept) if name in generated), default=len(kept) - 1)
    order = [*kept[: last + 1], *new, *kept[last + 1 :]]
    manifest["contributes"]["configuration"]["properties"] = {n: generated.get(n, properties.get(n)) for n in order}
    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
