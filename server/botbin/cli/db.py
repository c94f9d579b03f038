"""``botbin db``: set up the team database (backend = "postgres"): ``db init`` creates or migrates the schema
and its row-level security; ``db grant`` lets a Postgres role read or write a namespace, ``db revoke`` takes it
back (docs/postgres.md)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from botbin.cli.common import EXIT_OK, EXIT_PARTIAL, EXIT_USAGE, add, service

if TYPE_CHECKING:
    from botbin.sync.report import SyncReport


def cmd_db_init(args: argparse.Namespace) -> int:
    url, applied = service(args).team.init()
    done = ", ".join(map(str, applied)) if applied else "none (up to date)"
    print(f"botbin: team database {url}: schema versions applied: {done}", file=sys.stderr)
    return EXIT_OK


def cmd_db_grant(args: argparse.Namespace) -> int:
    granted = service(args).team.grant(args.role, args.namespace, args.write)
    what = "read and write" if args.write else "read"
    who = "every role" if granted == "public" else f"role {granted}"
    print(f"botbin: {who} may {what} namespace {args.namespace}", file=sys.stderr)
    return EXIT_OK


def cmd_db_revoke(args: argparse.Namespace) -> int:
    had = service(args).team.revoke(args.role, args.namespace)
    what = "may no longer read or write" if had else "had no grant on"
    print(f"botbin: role {args.role} {what} namespace {args.namespace}", file=sys.stderr)
    return EXIT_OK


def cmd_db_publish(args: argparse.Namespace) -> int:
    """Publish the synced notes again (from the AIF-BIN files, no re-embedding)."""
    memory = service(args)
    if memory.settings.backend != "postgres":
        print(
            'botbin: error: nothing to publish: this workspace\'s backend is "embedded" (set backend = '
            '"postgres" and postgres_url in botbin.toml; docs/postgres.md)',
            file=sys.stderr,
        )
        return EXIT_USAGE
    if not memory.settings.postgres_publish:
        print("botbin: error: nothing to publish: postgres_publish = false (a reader)", file=sys.stderr)
        return EXIT_USAGE
    outcome = memory.publish()
    if outcome.publish_error:
        print(f"botbin: error: {outcome.publish_error}", file=sys.stderr)
        return EXIT_PARTIAL
    report = outcome.published
    if args.json:
        print(json.dumps(report.to_dict() if report else None, ensure_ascii=False))
    else:
        print_published(outcome)
    return EXIT_PARTIAL if report is not None and report.failed else EXIT_OK


def print_published(synced: SyncReport) -> None:
    """One stderr line about what the sync's publish did (nothing for the embedded backend)."""
    report = synced.published
    kept = "" if report is None or not report.others else f" ({report.others} of other workspaces' notes kept)"
    if synced.publish_error:
        print(f"botbin: error: notes synced locally, not published: {synced.publish_error}", file=sys.stderr)
    elif report is not None:
        print(
            f"botbin: published to {report.url} namespace {report.namespace}: {len(report.published)} written, "
            f"{len(report.removed)} removed, {report.unchanged} unchanged, {len(report.failed)} failed" + kept,
            file=sys.stderr,
        )


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = add(sub, common, "db", "set up the team database (backend = postgres)", lambda a: a.db_command(a))
    db = p.add_subparsers(dest="db_subcommand", required=True, metavar="ACTION")
    init = db.add_parser("init", parents=[common], help="create or migrate the schema and its row-level security")
    init.set_defaults(db_command=cmd_db_init)
    grant = db.add_parser("grant", parents=[common], help="let a Postgres role read (or --write) a namespace")
    grant.add_argument("role", help="an existing Postgres role")
    grant.add_argument("namespace", help="a namespace (by default a workspace publishes into its folder's name)")
    grant.add_argument("--write", action="store_true", help="also let it publish into the namespace")
    grant.set_defaults(db_command=cmd_db_grant)
    revoke = db.add_parser("revoke", parents=[common], help="take a namespace away from a Postgres role")
    revoke.add_argument("role", help="a Postgres role (or one since dropped)")
    revoke.add_argument("namespace", help="the namespace it was granted")
    revoke.set_defaults(db_command=cmd_db_revoke)
    publish = db.add_parser("publish", parents=[common], help="publish the synced notes that changed")
    publish.add_argument("--json", action="store_true", help="print a JSON report")
    publish.set_defaults(db_command=cmd_db_publish)
