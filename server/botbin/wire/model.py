"""The base of every wire payload: camelCase on the wire, snake_case in Python, immutable, one docstring per field
(it becomes the JSON Schema ``description`` and the TypeScript doc comment)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

#: How a chunk binds an agent: a rule that must hold, a recommendation, or background.
ChunkKind = Literal["hard", "soft", "lore"]
#: Whether a folder's store is encrypted at rest; "converting" while an encrypt or decrypt is left for the next sync.
EncryptionState = Literal["on", "off", "converting"]


class WireModel(BaseModel):
    """A payload on the wire. Fields with a default are optional in params and always sent in results."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        extra="forbid",
        use_attribute_docstrings=True,
        json_schema_serialization_defaults_required=True,
    )


def dump(payload: WireModel) -> dict[str, Any]:
    """``payload`` as JSON data with its wire (camelCase) names."""
    return payload.model_dump(mode="json", by_alias=True)
