"""CLI commands: site (``mtboard build``)."""

from __future__ import annotations

import functools
import http.server
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

import typer

from mtboard.cli.app import app, guarded
from mtboard.core.errors import ConfigError


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files of the built site; a missing path gets the site's 404.html with status 404 (as GitHub Pages
    does), so ``--serve`` shows the styled not-found page. ``prefix``: the sub-path the site lives under (GitHub
    Pages: ``/<repo>/``); other paths are not found."""

    prefix = "/"

    def translate_path(self, path: str) -> str:
        if not path.startswith(self.prefix):
            return str(Path(self.directory) / ".mtboard-not-found")
        return super().translate_path("/" + path[len(self.prefix):])

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        page = Path(self.directory) / "404.html"
        if code != 404 or not page.is_file() or self.command not in ("GET", "HEAD"):
            super().send_error(code, message, explain)
            return
        body = page.read_bytes()
        self.send_response(404, message)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(body)


def cache_folder(given: Path | None, env_value: Path | None) -> Path | None:
    """``--cache``, else ``$MTBOARD_CACHE``, else ``.mtboard-cache`` in the project root; ``off`` (either): None."""
    from mtboard.ledger.cache import DEFAULT_CACHE
    from mtboard.site.build import project_root

    chosen = given if given is not None else env_value
    if chosen is not None:
        return None if str(chosen) == "off" else chosen
    return project_root() / DEFAULT_CACHE


@app.command()
@guarded
def build(
    submissions: Annotated[Path, typer.Option(help="Folder of run cards (searched recursively).")] =
    Path("submissions"),
    corpora: Annotated[Path, typer.Option(help="Folder of corpus files (dataset facts, reference entry sets).")] =
    Path("corpora"),
    out: Annotated[Path, typer.Option(help="Output folder for the built site: built beside it and swapped in whole "
                                           "only when the build succeeds (a failed or killed build leaves the previous "
                                           "site); a non-empty folder must be an earlier build's.")] =
    Path("build/site"),
    docs: Annotated[Path, typer.Option(help="Folder for the generated Markdown: rebuilt beside it and swapped in "
                                            "with the site.")] =
    Path("build/docs"),
    validate: Annotated[bool, typer.Option(help="Run the submission validator on each card (else schema only).")] =
    True,
    anchors: Annotated[Path, typer.Option(help="Folder of judge-reliability records (`mtboard anchor`) for the "
                                               "judges page.")] = Path("anchors"),
    serve: Annotated[bool, typer.Option("--serve", help="Serve the built site on http://127.0.0.1:PORT.")] = False,
    port: Annotated[int, typer.Option(help="Port for --serve.")] = 8000,
    site_url: Annotated[str | None, typer.Option("--site-url",
                                                 help="Address the site is published at, e.g. "
                                                      "https://OWNER.github.io/REPO/ (404.html links resolve from "
                                                      "it at any depth). Default $MTBOARD_SITE_URL, else with "
                                                      "--serve the local address."
                                                 )] = None,
    attestation_repository: Annotated[str | None, typer.Option(
        "--attestation-repository", help="owner/name whose verify workflow must have attested verification records "
                                         "for GDS verified (default $MTBOARD_ATTESTATION_REPOSITORY, else "
                                         "$GITHUB_REPOSITORY; none: every record shows as unattested).")] = None,
    official: Annotated[Path, typer.Option(help="Folder of scores-only gold cards for the official boards.")] =
    Path("official"),
    previous: Annotated[Path | None, typer.Option(
        "--previous", help="The published data/ledger.json of the last build: the changes page, data/changes.json and "
                           "the Atom feed list what changed since, and the changes are printed.")] = None,
    snapshots: Annotated[Path | None, typer.Option(
        "--snapshots", help="Folder of earlier builds' data/ledger.json files (any names; *.json, or *.json.gz "
                            "as published under data/snapshots/): published with this build's as the board's "
                            "dated history (history.html).")] = None,
    cache: Annotated[Path | None, typer.Option(
        "--cache", help="Build cache folder: validation verdicts, each card's header and summary, bootstrap "
                        "resamples, flip distances, scored sentinels, each board's statistics and run pages by "
                        "content, so an unchanged card is not validated, parsed or recomputed again (`off`: no "
                        "cache). Default $MTBOARD_CACHE, else .mtboard-cache/ in the project root.")] = None,
    prune_cache: Annotated[bool, typer.Option(
        "--prune-cache/--keep-cache", help="After a build, remove the cache entries it did not use (verdicts, "
                                           "card summaries, resamples, flips, sentinels, boards' statistics and "
                                           "run pages), so the folder holds "
                                           "what the next build of this tree needs and no more. --keep-cache: "
                                           "keep them (one cache shared by builds of different trees).")] = True,
) -> None:
    """Build the leaderboard site (MkDocs Material, strict) from every valid card under --submissions."""
    from mtboard.cli.environment import environment
    from mtboard.site import build_site

    env = environment()
    site_url = site_url or env.site_url
    if site_url is None and serve:
        site_url = f"http://127.0.0.1:{port}/"
    report = build_site(submissions, corpora if corpora.is_dir() else None, out, docs, validate=validate,
                        anchors=anchors if anchors.is_dir() else None, site_url=site_url,
                        attestation_repository=attestation_repository or env.attestation_repository,
                        official=official if official.is_dir() else None, secret_segment=env.secret_segment,
                        secret_source="$MTBOARD_SECRET_SEGMENT" if env.secret_segment is not None else None,
                        previous=previous, snapshots=snapshots, cache=cache_folder(cache, env.cache),
                        prune_cache=prune_cache)
    for w in report.warnings:
        typer.echo(f"warning: {w}", err=True)
    for r in report.rejected:
        typer.echo(f"warning: rejected {r.path}: {r.problems[0]}"
                   + (f" (+{len(r.problems) - 1} more)" if len(r.problems) > 1 else ""), err=True)
    secs = " ".join(f"{k} {v:.1f}s" for k, v in report.seconds.items())
    typer.echo(f"built {report.pages} pages: {report.cards} cards on {report.leaderboards} leaderboard(s), "
               f"{report.models} model portrait(s), {len(report.rejected)} rejected ({secs})")
    if report.cache_hits or report.cache_misses:
        typer.echo(f"validation cache: {report.cache_hits} hit(s), {report.cache_misses} miss(es); "
                   f"{report.board_hits} board(s) of run pages reused, {report.board_misses} rendered; "
                   f"{report.pages_reused} page(s) reused" + (f" ({report.full_build_reason})"
                                                              if report.full_build_reason else ""))
    if report.cache_pruned:
        typer.echo(f"cache: {report.cache_pruned} unused entr{'y' if report.cache_pruned == 1 else 'ies'} removed "
                   "(--keep-cache keeps them)")
    if previous is not None:
        typer.echo(f"changes since {previous}: {len(report.changes) or 'none'}")
        for line in report.changes:
            typer.echo(f"  {line}")
    if not serve:  # issue 36 item 1: a file:// address hides the search box and breaks the compare page
        from mtboard.cli.demo import SERVE_ADDRESS, serve_command  # noqa: PLC0415

        typer.echo(f"look at it: {serve_command(out.resolve(), Path.cwd().resolve())}")
        typer.echo(f"  then open {SERVE_ADDRESS}")
    if serve:
        prefix = urlsplit(site_url).path or "/" if site_url else "/"
        handler = functools.partial(type("Handler", (SiteHandler,), {"prefix": prefix}), directory=str(out))
        try:
            httpd_cm = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        except OSError as exc:
            raise ConfigError(f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}", field="--port",
                              fix="pick a free port, e.g. --port 8765") from None
        with httpd_cm as httpd:
            typer.echo(f"serving http://127.0.0.1:{port}{prefix} (Ctrl+C to stop)")
            try:
                httpd.serve_forever()
            except KeyboardInterrupt:
                typer.echo("stopped")
