"""Names as agents write them: public dotted names through package re-exports, answered from the index.

A real package on disk (Python and TypeScript re-exports), the real lexical index, the real scanner,
and basedpyright for the service-level answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from textwrap import dedent

import pytest

from daemon.core.languages import language_for_path
from daemon.core.models import Chunk
from daemon.errors import InvalidToolInput
from daemon.index.scanner import Scanner
from daemon.index.shared_index import SharedIndex
from daemon.service.intel.code_intel import CodeIntelService
from daemon.service.intel.params import DefinitionParams, ReferencesParams, SignatureParams
from daemon.service.intel.symbol_resolver import SymbolResolver, may_define
from tests.intel_tools import require_server, workspace_config

FILES = {
    "mypkg/__init__.py": """\
        from .api import get, post as send
        from .sessions import Session
        from . import helpers
        from .models import *
        """,
    "mypkg/api.py": """\
        def get(url: str) -> str:
            return "GET " + url


        def post(url: str) -> str:
            return "POST " + url
        """,
    "mypkg/sessions.py": """\
        class Session:
            def request(self, method: str, url: str) -> str:
                return method + url
        """,
    "mypkg/helpers.py": """\
        def slugify(text: str) -> str:
            return text.lower()
        """,
    "mypkg/models.py": """\
        class Item:
            name: str = ""
        """,
    "one/tools/__init__.py": "from .core import run\n",
    "one/tools/core.py": "def run() -> int:\n    return 1\n",
    "two/tools/__init__.py": "from .core import run\n",
    "two/tools/core.py": "def run() -> int:\n    return 2\n",
    "app.py": """\
        import mypkg

        print(mypkg.get("x"), mypkg.Session().request("GET", "/"))
        """,
    "shop/index.ts": """\
        export { makeCart as createCart } from './cart';
        export * from './money';
        export * as formats from './formats';
        """,
    "shop/cart.ts": "export function makeCart(): string[] {\n  return [];\n}\n",
    "shop/money.ts": "export class Money {\n  add(other: Money): Money {\n    return other;\n  }\n}\n",
    "shop/formats.ts": "export function euro(cents: number): string {\n  return `${cents / 100} EUR`;\n}\n",
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dedent(text))
    return root


def _no_index(_query: str) -> list[Chunk] | None:
    return None


def _resolver(
    root: Path, index_search: Callable[[str], list[Chunk] | None], generation: Callable[[], object] | None = None
) -> SymbolResolver:
    scanner = Scanner(
        root, classify=language_for_path, max_file_bytes=1_000_000, extra_excludes=(), include_secrets=False
    )
    return SymbolResolver(
        root, index_search=index_search, scanner=scanner, max_file_bytes=1_000_000, generation=generation
    )


@pytest.mark.parametrize(
    ("name", "path", "qualified"),
    [
        ("mypkg.get", "mypkg/api.py", "get"),
        ("mypkg.send", "mypkg/api.py", "post"),
        ("mypkg.Session", "mypkg/sessions.py", "Session"),
        ("mypkg.Session.request", "mypkg/sessions.py", "Session.request"),
        ("mypkg.helpers.slugify", "mypkg/helpers.py", "slugify"),
        ("mypkg.Item", "mypkg/models.py", "Item"),
        ("shop.createCart", "shop/cart.ts", "makeCart"),
        ("shop.Money.add", "shop/money.ts", "Money.add"),
        ("shop.formats.euro", "shop/formats.ts", "euro"),
    ],
)
def test_a_public_dotted_name_is_followed_through_its_package_re_exports(
    workspace: Path, name: str, path: str, qualified: str
) -> None:
    matches, via = _resolver(workspace, _no_index).resolve(name)
    assert via == "reexport"
    assert [(m.path, m.qualified_name) for m in matches] == [(path, qualified)]
    assert matches[0].exported_by is not None and matches[0].exported_by.split("/")[0] == name.split(".")[0]


def test_an_ambiguous_re_exported_name_answers_every_candidate(workspace: Path) -> None:
    matches, via = _resolver(workspace, _no_index).resolve("tools.run")
    assert via == "reexport"
    assert sorted(m.path for m in matches) == ["one/tools/core.py", "two/tools/core.py"]


def test_a_name_nothing_exports_is_not_invented(workspace: Path) -> None:
    assert _resolver(workspace, _no_index).resolve("mypkg.delete") == ([], "none")
    assert _resolver(workspace, _no_index).resolve("shop.makeCart") == ([], "none")  # exported only as createCart


def test_a_re_exported_name_follows_edits_on_disk(workspace: Path) -> None:
    resolver = _resolver(workspace, _no_index)
    assert resolver.resolve("mypkg.Session.request")[1] == "reexport"
    (workspace / "mypkg" / "sessions.py").write_text("class Session:\n    def send_request(self) -> None: ...\n")
    assert resolver.resolve("mypkg.Session.request") == ([], "none")
    assert resolver.resolve("mypkg.Session.send_request")[0][0].qualified_name == "Session.send_request"


def test_with_a_built_index_names_are_answered_from_it_without_a_scan(workspace: Path, tmp_path: Path) -> None:
    shared = SharedIndex(workspace_config(workspace, tmp_path / "state"), wait_seconds=60)
    shared.open(run_pass=True)
    queries: list[str] = []

    def search(query: str) -> list[Chunk] | None:
        queries.append(query)
        return shared.candidates(query)

    try:
        resolver = _resolver(workspace, search)
        for name, path in [
            ("Session.request", "mypkg/sessions.py"),
            ("mypkg.sessions.Session.request", "mypkg/sessions.py"),
            ("slugify", "mypkg/helpers.py"),
            ("Money.add", "shop/money.ts"),
        ]:
            matches, via = resolver.resolve(name)
            assert via == "index", name
            assert matches[0].path == path
        assert len(queries) == 4
    finally:
        shared.close()


async def test_find_definition_references_and_signature_take_the_public_name(workspace: Path, tmp_path: Path) -> None:
    require_server("python")
    async with CodeIntelService.open(workspace_config(workspace, tmp_path / "state")) as intel:
        found = await asyncio.wait_for(intel.find_definition(DefinitionParams(symbol="mypkg.get")), 90)
        (definition,) = found.definitions
        assert (definition.location.path, definition.location.range.start_line) == ("mypkg/api.py", 1)
        assert any("re-exported by mypkg/__init__.py" in note for note in found.notes)
        refs = await asyncio.wait_for(intel.get_references(ReferencesParams(symbol="mypkg.Session.request")), 90)
        assert {r.location.path for r in refs.references} >= {"app.py"}
        signature = await asyncio.wait_for(intel.get_signature(SignatureParams(symbol="mypkg.send")), 90)
        assert "def post(url: str) -> str" in signature.signature
        with pytest.raises(InvalidToolInput, match=r"mypkg\.delete"):
            await intel.find_definition(DefinitionParams(symbol="mypkg.delete"))


def test_a_resolved_name_is_remembered_until_the_index_generation_or_its_file_changes(
    workspace: Path, tmp_path: Path
) -> None:
    shared = SharedIndex(workspace_config(workspace, tmp_path / "state"), wait_seconds=60)
    shared.open(run_pass=True)
    queries: list[str] = []
    generation = [0]

    def search(query: str) -> list[Chunk] | None:
        queries.append(query)
        return shared.candidates(query)

    try:
        resolver = _resolver(workspace, search, lambda: generation[0])
        first = resolver.resolve("Session.request")
        assert first[1] == "index" and first[0][0].path == "mypkg/sessions.py"
        assert resolver.resolve("Session.request") == first
        assert len(queries) == 1  # the second answer was remembered
        generation[0] += 1  # the index changed
        assert resolver.resolve("Session.request") == first
        assert len(queries) == 2
        sessions = workspace / "mypkg" / "sessions.py"
        sessions.write_text(sessions.read_text() + "\n\n# edited\n")  # not re-indexed yet: the file tells
        resolver.resolve("Session.request")
        assert len(queries) == 3
        assert resolver.resolve("NoSuchName") == ([], "none")
        assert resolver.resolve("NoSuchName") == ([], "none")
        assert len(queries) == 5  # a name not found is looked for again
    finally:
        shared.close()


@pytest.mark.parametrize(
    ("path", "text", "name", "expected"),
    [
        ("pkg/sessions.py", "class Session:\n    def request(self): ...\n", "Session.request", True),
        ("pkg/api.py", "def request(method): ...\n", "Session.request", False),  # no Session here
        ("pkg/Session.py", "def request(method): ...\n", "Session.request", True),  # module-qualified
        ("pkg/sessions/__init__.py", "def request(): ...\n", "pkg.sessions.request", True),
        ("pkg/other.py", "def request(): ...\n", "pkg.sessions.request", False),
        ("pkg/api.py", "def request(method): ...\n", "request", True),
        ("pkg/api.py", "def get(url): ...\n", "request", False),
    ],
)
def test_a_scan_reads_only_files_whose_text_can_define_the_name(
    path: str, text: str, name: str, expected: bool
) -> None:
    assert may_define(path, text.encode(), name.split(".")) is expected


def test_a_scan_finds_what_the_index_finds_in_every_file_that_can_define_it(workspace: Path, tmp_path: Path) -> None:
    shared = SharedIndex(workspace_config(workspace, tmp_path / "state"), wait_seconds=60)
    shared.open(run_pass=True)
    try:
        for name in ["Session.request", "sessions.Session.request", "mypkg.sessions.Session", "Money.add", "run"]:
            indexed, via = _resolver(workspace, shared.candidates).resolve(name)
            scanned, scanned_via = _resolver(workspace, _no_index).resolve(name)
            assert (via, scanned_via) == ("index", "tree_sitter"), name
            assert [(m.path, m.start_line, m.rank) for m in scanned] == [
                (m.path, m.start_line, m.rank) for m in indexed
            ], name
    finally:
        shared.close()
