"""The studio's one HTML page: the built front end (static/studio.js and studio.css, from extensions/studio)
inlined under a nonce, so that the page needs no other request and the Content-Security-Policy allows no script,
style or connection but its own."""

from __future__ import annotations

import html
import secrets
from functools import lru_cache
from importlib import resources

#: The files ``npm run build -w extensions/studio`` writes into this package.
BUNDLE = ("studio.js", "studio.css")
MISSING = (
    "the Recall Studio front end is not built: run `npm install && npm run build -w extensions/studio` in the "
    "repository (scripts/setup.sh does it)"
)


@lru_cache(maxsize=1)
def bundle() -> tuple[str, str] | None:
    """The built script and stylesheet, or None when they are missing."""
    folder = resources.files("botbin.studio") / "static"
    try:
        script, style = ((folder / name).read_text(encoding="utf-8") for name in BUNDLE)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return script, style


def csp(nonce: str) -> str:
    """The page's Content-Security-Policy: its own inlined script and style, API calls to itself, nothing else."""
    return (
        f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


def page(title: str) -> tuple[str, str]:
    """(HTML, Content-Security-Policy) of the page; a page that says what to run when the bundle is missing."""
    nonce = secrets.token_urlsafe(16)
    built = bundle()
    if built is None:
        body = f'<main><h1>Recall Studio</h1><p role="alert">{html.escape(MISSING)}</p></main>'
        head = ""
    else:
        script, style = built
        head = f'<style nonce="{nonce}">{style}</style>'
        # the bundle is ours, but a "</script" inside a string would end the element: escape it as JS does
        inline = script.replace("</script", "<\\/script")
        body = f'<div id="app"></div><script nonce="{nonce}">{inline}</script>'
    text = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<link rel="icon" href="data:,"><title>{html.escape(title)}</title>{head}</head><body>{body}</body></html>'
    )
    return text, csp(nonce)
