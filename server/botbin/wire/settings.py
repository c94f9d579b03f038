"""``ServerSettings`` and ``ServerOptions``: what an editor sends as ``initializationOptions`` and in
``workspace/didChangeConfiguration``, made from the settings model (config_model.py: the settings marked
``EDITOR``), so that their keys, types, bounds and descriptions are written once."""

from __future__ import annotations

from typing import Any

from pydantic import Field, create_model
from pydantic.fields import FieldInfo

from botbin.config import FIELDS, field_bounds, number_text
from botbin.wire.model import WireModel


def editor_keys() -> tuple[str, ...]:
    """The settings the editors offer, in the model's order."""
    return tuple(key for key, field in FIELDS.items() if _extra(field).get("editor"))


def _extra(field: FieldInfo) -> dict[str, Any]:
    extra = field.json_schema_extra
    return extra if isinstance(extra, dict) else {}


def bounds_text(field: FieldInfo) -> str:
    """``"0-1"``, ``"1-1000"`` (an integer's ``gt`` bound read as its first allowed value), or ``""``."""
    low, strict, high = field_bounds(field)
    if low is None or high is None:
        return ""
    first = low + 1 if strict and field.annotation is int else low
    return f"{number_text(first)}-{number_text(high)}"


def _optional(key: str) -> tuple[Any, Any]:
    field = FIELDS[key]
    kind: Any = list[str] if key in ("include", "exclude") else field.annotation
    rule = bounds_text(field)
    text = str(field.description)
    description = text[0].upper() + text[1:] + (f", {rule}." if rule else ".")
    return (kind | None, Field(default=None, alias=key, description=description))


ServerSettings: type[WireModel] = create_model(  # type: ignore[call-overload]
    "ServerSettings",
    __base__=WireModel,
    __doc__="""Server settings with the keys of botbin.toml, sent as ``initializationOptions`` and, wrapped as
    ``{botbin: ...}``, in ``workspace/didChangeConfiguration``. An absent key keeps botbin.toml's value.""",
    **{key: _optional(key) for key in editor_keys()},
)
ServerOptions: type[WireModel] = create_model(
    "ServerOptions",
    __base__=ServerSettings,
    __doc__="""What ``initializationOptions`` and ``didChangeConfiguration`` carry: the settings, plus the passphrase of
    an encrypted store (the server keeps it in memory only; a front end never saves or logs it).""",
    passphrase=(str | None, Field(default=None, description="The passphrase of an encrypted store.")),
)
