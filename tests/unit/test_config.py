from __future__ import annotations

from pathlib import Path

import pytest

from daemon.config import config_json_schema, load_config
from daemon.errors import ConfigError, ErrorCode


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), **extra}


def test_defaults_apply_when_no_file_or_env_is_present(tmp_path: Path) -> None:
    config = load_config(tmp_path, env=_env(tmp_path))
    assert config.index.max_file_bytes == 1_000_000
    assert config.qdrant.mode == "edge"
    assert config.workspace == str(tmp_path.resolve())


def test_layers_apply_in_order_user_file_then_workspace_then_env_then_cli(tmp_path: Path) -> None:
    user = tmp_path / "home" / ".config" / "ided" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text("[index]\nmax_file_bytes = 30\ntext_window_lines = 11\n[search]\ndefault_k = 3\n")
    (tmp_path / ".ided.toml").write_text("[index]\nmax_file_bytes = 20\n[search]\nprefetch = 7\n")
    env = _env(tmp_path, IDED_SEARCH__DEFAULT_K="4", IDED_SEARCH__PREFETCH="8")
    config = load_config(tmp_path, env=env, overrides={"search": {"prefetch": 9}})
    assert config.index.text_window_lines == 11  # user file
    assert config.index.max_file_bytes == 20  # workspace beats user
    assert config.search.default_k == 4  # env beats files
    assert config.search.prefetch == 9  # CLI beats env


def test_unknown_key_in_workspace_file_names_the_key_and_the_file(tmp_path: Path) -> None:
    (tmp_path / ".ided.toml").write_text("[index]\nmax_file_byte = 5\n")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, env=_env(tmp_path))
    message = str(info.value)
    assert "unknown key 'index.max_file_byte'" in message
    assert str(tmp_path / ".ided.toml") in message
    assert info.value.code is ErrorCode.CONFIG_INVALID


def test_malformed_toml_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / ".ided.toml").write_text("[index\n")
    with pytest.raises(ConfigError, match=r"not valid TOML"):
        load_config(tmp_path, env=_env(tmp_path))


def test_wrong_type_from_environment_is_reported_with_its_layer(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"'index.max_file_bytes'.*environment"):
        load_config(tmp_path, env=_env(tmp_path, IDED_INDEX__MAX_FILE_BYTES="lots"))


def test_setting_a_qdrant_url_selects_server_mode(tmp_path: Path) -> None:
    config = load_config(tmp_path, env=_env(tmp_path, IDED_QDRANT__URL="http://127.0.0.1:6333"))
    assert config.qdrant.mode == "server"


def test_state_dirs_differ_between_workspaces_with_the_same_name(tmp_path: Path) -> None:
    a = tmp_path / "one" / "proj"
    b = tmp_path / "two" / "proj"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    env = _env(tmp_path)
    assert load_config(a, env=env).state_path != load_config(b, env=env).state_path


def test_published_schema_forbids_unknown_keys() -> None:
    schema = config_json_schema()
    assert schema["additionalProperties"] is False
    assert "index" in schema["properties"]


def test_published_schema_file_matches_the_code() -> None:
    import json

    published = json.loads((Path(__file__).parents[2] / "docs" / "config.schema.json").read_text())
    assert published == config_json_schema(), "run `just schema` to regenerate docs/config.schema.json"


def test_environment_variables_that_are_not_config_sections_are_ignored(tmp_path: Path) -> None:
    config = load_config(tmp_path, env=_env(tmp_path, IDED_MCP_TOKEN="secret", IDED_SKIP_GOPLS="1"))
    assert config.index.max_file_bytes == 1_000_000
    with pytest.raises(ConfigError, match=r"unknown key 'index\.bogus'"):
        load_config(tmp_path, env=_env(tmp_path, IDED_INDEX__BOGUS="1"))


def test_set_pairs_round_trip_through_a_child_command_line() -> None:
    from daemon.config import parse_set_pairs, to_set_pairs

    tree = {"state_dir": "/tmp/x y", "embedding": {"enabled": False}, "daemon": {"debounce_ms": 20}, "n": {"s": "1"}}
    assert parse_set_pairs(to_set_pairs(tree)) == tree
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_set_pairs(["no-equals-sign"])
