"""Names on the wire (botbin.lsp.protocol): unique, and namespaced as LSP clients expect."""

from __future__ import annotations

from botbin.lsp import protocol


def wire_names() -> dict[str, str]:
    """Every upper-case string constant of the module, by constant name."""
    return {name: value for name, value in vars(protocol).items() if name.isupper() and isinstance(value, str)}


def test_constants_are_unique() -> None:
    names = wire_names()
    assert {
        "SEARCH",
        "RELATED",
        "STATUS",
        "CONTEXT",
        "REMEMBER",
        "COMMAND_SYNC",
        "COMMAND_REINDEX",
        "PROGRESS_TITLE",
        "DIAGNOSTIC_SOURCE",
        "SERVER_NAME",
    } <= set(names)
    methods = [v for k, v in names.items() if k not in ("SERVER_NAME", "DIAGNOSTIC_SOURCE")]
    assert len(methods) == len(set(methods))
    assert len(protocol.CUSTOM_REQUESTS) == len(set(protocol.CUSTOM_REQUESTS))
    assert len(protocol.COMMANDS) == len(set(protocol.COMMANDS))
    assert not set(protocol.CUSTOM_REQUESTS) & set(protocol.COMMANDS)


def test_custom_requests_are_namespaced() -> None:
    assert set(protocol.CUSTOM_REQUESTS) == {
        protocol.SEARCH,
        protocol.RELATED,
        protocol.STATUS,
        protocol.CONTEXT,
        protocol.REMEMBER,
    }
    for method in protocol.CUSTOM_REQUESTS:
        assert method.startswith("botbin/"), method
        assert method != "botbin/" and " " not in method
        assert not method.startswith("$/")  # reserved for protocol notifications


def test_commands_are_namespaced() -> None:
    assert set(protocol.COMMANDS) == {protocol.COMMAND_SYNC, protocol.COMMAND_REINDEX, protocol.COMMAND_STUDIO}
    for command in protocol.COMMANDS:
        assert command.startswith("botbin."), command
        assert command != "botbin." and " " not in command and "/" not in command


def test_every_request_or_command_constant_is_listed() -> None:
    names = wire_names()
    requests = {v for v in names.values() if v.startswith("botbin/")}
    commands = {v for v in names.values() if v.startswith("botbin.")}
    assert requests == set(protocol.CUSTOM_REQUESTS) | set(protocol.CUSTOM_NOTIFICATIONS)
    assert not set(protocol.CUSTOM_REQUESTS) & set(protocol.CUSTOM_NOTIFICATIONS)
    assert commands == set(protocol.COMMANDS)


def test_server_and_diagnostic_names() -> None:
    assert protocol.SERVER_NAME == "botbin"
    assert protocol.DIAGNOSTIC_SOURCE == "botbin"
    assert protocol.PROGRESS_TITLE.startswith("botbin")
