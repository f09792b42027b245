"""Finding language servers: search path before PATH, install hints, per-language configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from daemon.config import IntelConfig, LanguageServerConfig
from daemon.intel.lsp.registry import lsp_language_id, resolve_servers
from tests.intel_tools import intel_config, require_server


def _spec_for(config: IntelConfig, language: str, workspace: Path):
    return next(s for s in resolve_servers(config, workspace) if language in s.languages)


def test_search_path_finds_the_python_server_installed_outside_the_venv(tmp_path: Path) -> None:
    name = require_server("python")
    spec = _spec_for(intel_config(), "python", tmp_path)
    assert spec.name == name
    assert spec.command is not None and ".tools" in spec.command
    assert spec.reason is None


@pytest.mark.parametrize("venv", [".venv", "venv"])
def test_a_server_in_the_projects_own_venv_is_found_once_the_workspace_is_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, venv: str
) -> None:
    require_server("python")
    installed = _spec_for(intel_config(), "python", tmp_path).command
    assert installed is not None
    bin_dir = tmp_path / "ws" / venv / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / Path(installed).name).symlink_to(installed)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))

    trusted = next(s for s in resolve_servers(IntelConfig(), tmp_path / "ws", trusted=True) if "python" in s.languages)
    assert trusted.command == str(bin_dir / Path(installed).name)
    assert trusted.reason is None
    untrusted = _spec_for(IntelConfig(), "python", tmp_path / "ws")
    assert untrusted.command is None and untrusted.reason is not None and "install" in untrusted.reason
    assert _spec_for(IntelConfig(), "python", tmp_path / "elsewhere").command is None


def test_untrusted_the_servers_that_build_the_project_are_refused_naming_how_to_trust(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("rust-analyzer", "jdtls"):
        (bin_dir / name).write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    config = IntelConfig()
    ws = tmp_path / "ws"
    ws.mkdir()
    for language, name in (("rust", "rust-analyzer"), ("java", "jdtls")):
        refused = _spec_for(config, language, ws)
        assert refused.command is None and refused.how_to_trust == f"ided trust {ws}"
        assert refused.reason is not None and "runs the repository's code" in refused.reason
        trusted = next(s for s in resolve_servers(config, ws, trusted=True) if language in s.languages)
        assert trusted.command == str(bin_dir / name)


def test_a_missing_server_reports_what_was_looked_for_and_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    spec = _spec_for(IntelConfig(search_path=(str(tmp_path),)), "java", tmp_path)
    assert spec.command is None
    assert spec.reason is not None
    assert "jdtls" in spec.reason
    assert "install" in spec.reason


def test_typescript_and_javascript_share_one_server_and_c_and_cpp_share_clangd(tmp_path: Path) -> None:
    specs = resolve_servers(intel_config(), tmp_path)
    by_language = {lang: spec.name for spec in specs for lang in spec.languages}
    assert by_language["javascript"] == by_language["typescript"] == by_language["tsx"]
    assert by_language["c"] == by_language["cpp"] == "clangd"


def test_only_the_groups_of_the_languages_asked_for_are_looked_for(tmp_path: Path) -> None:
    specs = resolve_servers(intel_config(), tmp_path, only={"typescript"})
    assert [spec.languages for spec in specs] == [
        next(s.languages for s in resolve_servers(intel_config(), tmp_path) if "typescript" in s.languages)
    ]
    assert resolve_servers(intel_config(), tmp_path, only=()) == []


def test_a_disabled_language_gets_no_server_and_says_why(tmp_path: Path) -> None:
    config = intel_config(servers={"python": LanguageServerConfig(enabled=False)})
    spec = _spec_for(config, "python", tmp_path)
    assert spec.command is None
    assert spec.reason == "disabled by intel.servers.python.enabled = false"


def test_a_configured_command_that_does_not_exist_names_the_config_key(tmp_path: Path) -> None:
    config = intel_config(servers={"python": LanguageServerConfig(command="no-such-language-server")})
    spec = _spec_for(config, "python", tmp_path)
    assert spec.command is None
    assert spec.reason is not None and "intel.servers.python.command" in spec.reason


def test_a_configured_command_keeps_the_known_servers_arguments(tmp_path: Path) -> None:
    require_server("python")
    config = intel_config(servers={"python": LanguageServerConfig(command="basedpyright-langserver")})
    spec = _spec_for(config, "python", tmp_path)
    assert spec.name == "basedpyright"
    assert spec.args == ("--stdio",)


@pytest.mark.parametrize(
    ("path", "language", "expected"),
    [
        ("src/app.py", "python", "python"),
        ("web/view.tsx", "tsx", "typescriptreact"),
        ("web/view.jsx", "javascript", "javascriptreact"),
        ("include/geo.hpp", "cpp", "cpp"),
        ("src/legacy.c", "c", "c"),
    ],
)
def test_did_open_language_ids_follow_the_file_extension(path: str, language: str, expected: str) -> None:
    assert lsp_language_id(path, language) == expected
