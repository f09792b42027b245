"""The trust store, what the loader records of the repository's layer, and which commands a run gets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from daemon.config import load_config
from daemon.errors import ConfigError, ErrorCode
from daemon.orchestration.agents import CommandSources
from daemon.orchestration.workflow_loader import WorkflowCatalog, builtin_workflow_dir
from daemon.trust import TrustStore, trust_file_path


def test_the_trust_file_lives_in_the_users_config_dir_or_where_ided_trust_file_says(tmp_path: Path) -> None:
    assert trust_file_path({"XDG_CONFIG_HOME": str(tmp_path)}) == tmp_path / "ided" / "trusted-workspaces.json"
    assert trust_file_path({"HOME": str(tmp_path)}) == tmp_path / ".config" / "ided" / "trusted-workspaces.json"
    assert trust_file_path({"IDED_TRUST_FILE": str(tmp_path / "t.json")}) == tmp_path / "t.json"


def test_trusting_a_folder_covers_its_subfolders_and_removing_it_forgets_them(tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "cfg" / "trusted.json")
    parent, child, sibling = tmp_path / "src", tmp_path / "src" / "repo", tmp_path / "other"
    child.mkdir(parents=True)
    sibling.mkdir()
    assert not store.trusted(child)
    assert store.add(parent) and not store.add(parent)
    assert store.trusted(parent) and store.trusted(child) and not store.trusted(sibling)
    assert [e.path for e in store.entries()] == [parent.resolve()]
    assert store.remove(parent) and not store.remove(parent)
    assert not store.trusted(child)


def test_a_damaged_trust_file_is_a_coded_error_naming_it_and_only_folders_can_be_trusted(tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "trusted.json")
    deep = '{"workspaces": ' + "[" * 100_000 + "]" * 100_000 + "}"
    for damaged in ("{not json", deep, '{"workspaces": "x"}', "[]", "\ud800"):
        store.path.write_text(damaged, encoding="utf-8", errors="surrogatepass")
        with pytest.raises(ConfigError) as caught:
            store.trusted(tmp_path)
        assert caught.value.code is ErrorCode.CONFIG_INVALID and str(store.path) in str(caught.value)
        with pytest.raises(ConfigError):
            store.add(tmp_path)  # never written over: the user's list is theirs to fix
        assert store.path.read_text(encoding="utf-8", errors="surrogatepass") == damaged
    store.path.write_text(json.dumps({"workspaces": [{"path": "relative/repo"}, {"path": 3}, "x"]}))
    assert store.entries() == []  # entries that are no absolute path are skipped (logged)
    store.path.unlink()
    assert store.entries() == [] and not store.trusted(tmp_path)
    with pytest.raises(ConfigError) as caught:
        store.add(tmp_path / "missing")
    assert caught.value.code is ErrorCode.CONFIG_INVALID


def _workspace(tmp_path: Path, toml: str) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".ided.toml").write_text(toml)
    return ws


def test_the_loader_records_the_repositorys_commands_apart_from_the_users_own(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, '[agents.commands]\ntest = "repo-test"\nlint = "repo-lint"\n')
    user = tmp_path / "user.toml"
    user.write_text('[agents.commands]\ntest = "my-test"\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg"), "IDED_AGENTS__COMMANDS__FMT": "my-fmt"}
    config = load_config(ws, env=env, user_file=user, overrides={"agents": {"commands": {"cli": "my-cli"}}})
    assert config.agents.commands == {"test": "repo-test", "lint": "repo-lint", "fmt": "my-fmt", "cli": "my-cli"}
    assert config.project.commands == {"test": "repo-test", "lint": "repo-lint"}
    assert config.project.own_commands == {"test": "my-test", "fmt": "my-fmt", "cli": "my-cli"}
    assert config.project.file == str(ws.resolve() / ".ided.toml")
    assert config.model_copy(update={"workspace": "x"}).project == config.project


def test_an_untrusted_repositorys_language_server_executables_are_left_out_and_named(tmp_path: Path) -> None:
    toml = (
        '[intel]\nsearch_path = ["bin"]\n[intel.servers.python]\ncommand = "./evil"\nargs = ["-x"]\n'
        'settings = {a = 1}\n[logging]\nfile = "../../.bashrc"\nlevel = "INFO"\n'
    )
    ws = _workspace(tmp_path, toml)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    untrusted = load_config(ws, env=env, overrides={"intel": {"servers": {"go": {"command": "/usr/bin/gopls"}}}})
    assert untrusted.intel.search_path == ()
    assert "python" not in untrusted.intel.servers  # command, args and settings all left out
    assert untrusted.intel.servers["go"].command == "/usr/bin/gopls"  # the user's own
    assert untrusted.logging.file is None and untrusted.logging.level == "WARNING"
    assert set(untrusted.project.withheld) == {
        "intel.servers.python.command",
        "intel.servers.python.args",
        "intel.servers.python.settings",
        "intel.search_path",
        "logging.file",
        "logging.level",
    }
    assert untrusted.project.untrusted_languages == ("python",)
    assert untrusted.project.how_to_trust == f"ided trust {ws.resolve()}"
    assert untrusted.project.trusted is False

    TrustStore.default(env).add(ws)
    trusted = load_config(ws, env=env)
    assert trusted.intel.servers["python"].command == "./evil" and trusted.intel.search_path == ("bin",)
    assert trusted.intel.servers["python"].settings == {"a": 1}
    assert trusted.logging.file == "../../.bashrc"
    assert trusted.project.withheld == () and trusted.project.untrusted_languages == ()
    assert trusted.project.trusted is True


def test_a_run_gets_the_users_commands_always_and_the_repositorys_only_when_trusted() -> None:
    catalog = WorkflowCatalog.load([builtin_workflow_dir()])
    bug_fix = catalog.get("bug_fix").model_copy(update={"commands": {"test": "wf-test", "check": "wf-check"}})
    sources = CommandSources(
        own={"test": "my-test"},
        repository={"test": "repo-test", "lint": "repo-lint"},
        repository_file="/r/.ided.toml",
        repository_workflows={"bug_fix": "/r/.ided/workflows/bug_fix.yaml"},
        trusted=lambda: False,
        how_to_trust="ided trust /r",
    )
    untrusted = sources.for_run("bug_fix", bug_fix, trusted=False)
    assert untrusted.named == {"test": "my-test"}
    assert {(w.name, w.source) for w in untrusted.withheld} == {
        ("test", "/r/.ided/workflows/bug_fix.yaml"),
        ("check", "/r/.ided/workflows/bug_fix.yaml"),
        ("test", "/r/.ided.toml"),
        ("lint", "/r/.ided.toml"),
    }
    assert "ided trust /r" in untrusted.explain()
    trusted = sources.for_run("bug_fix", bug_fix, trusted=True)
    assert trusted.named == {"test": "repo-test", "check": "wf-check", "lint": "repo-lint"}
    assert trusted.withheld == () and trusted.explain() == ""
    assert sources.needs_trust({"bug_fix": bug_fix})
    refusal = sources.refusal({"bug_fix": bug_fix})
    assert refusal is not None and refusal.code is ErrorCode.WORKSPACE_UNTRUSTED
    assert refusal.how_to_trust == "ided trust /r"
    assert CommandSources.given({"test": "t"}).for_run(None, None, trusted=False).named == {"test": "t"}


def test_a_trust_file_that_cannot_be_read_or_written_is_a_config_error_naming_it(tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "cfg" / "trusted.json")
    repo = tmp_path / "repo"
    repo.mkdir()
    store.add(repo)
    store.path.unlink()
    store.path.mkdir()  # the file's place is taken by a folder
    with pytest.raises(ConfigError) as caught:
        store.add(tmp_path)
    assert "cannot be read" in caught.value.message and str(store.path) in caught.value.message
    assert sorted(p.name for p in store.path.parent.iterdir()) == ["trusted.json"]
    unwritable = TrustStore(Path("/proc/self/ided-no-such-folder/trusted.json"))  # no folder can be made there
    with pytest.raises(ConfigError) as caught:
        unwritable.add(tmp_path)
    assert "cannot be written" in caught.value.message and caught.value.code is ErrorCode.CONFIG_INVALID
