"""Configuration: one frozen model, one loader.

Layers, later wins: built-in defaults -> user file (``$XDG_CONFIG_HOME/ided/config.toml``) ->
``.ided.toml`` in the workspace -> environment (``IDED_SECTION__KEY=value``) -> CLI overrides.
Unknown keys anywhere are an error that names the key and the file it came from.

The workspace's own ``.ided.toml`` is repository content: while the workspace is not trusted
(``daemon.trust``) the loader takes from it only the keys ``daemon.repository_settings`` allows (the
allowlist, one decision per key) and leaves the rest out of the merge. ``Config.project`` records what
it left out (``withheld``, with why), whether the workspace is trusted, the languages whose server the
repository chose (``untrusted_languages``: their tools refuse, naming how to trust) and the commands the
repository names (they run only once trusted, decided at run time). Your own layers are never
restricted.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import Field, PrivateAttr, ValidationError, field_validator

from daemon.core.frozen_model import FrozenModel
from daemon.errors import ConfigError, WorkspaceRefused
from daemon.repository_settings import REPOSITORY_SETTINGS, Decision, Refusal, untrusted_layer
from daemon.trust import TrustStore, how_to_trust

__all__ = [
    "AcpConfig",
    "CheckpointConfig",
    "Config",
    "DaemonConfig",
    "EmbeddingConfig",
    "IndexConfig",
    "IntelConfig",
    "LanguageServerConfig",
    "LoggingConfig",
    "ModelConfig",
    "PipelineConfig",
    "ProjectLayer",
    "QdrantConfig",
    "RerankConfig",
    "ResilienceConfig",
    "RetrievalConfig",
    "RootsConfig",
    "RunsConfig",
    "SearchConfig",
    "VcsConfig",
    "config_json_schema",
    "default_cache_root",
    "default_state_dir",
    "load_config",
    "parse_set_pairs",
    "to_set_pairs",
    "user_config_path",
]

ENV_PREFIX = "IDED_"


class _Section(FrozenModel):
    """A configuration section: frozen, and an unknown key is an error."""


class IndexConfig(_Section):
    """What the workspace scan indexes."""

    max_file_bytes: int = Field(default=1_000_000, ge=1, description="Files larger than this are skipped.")
    exclude: tuple[str, ...] = Field(default=(), description="Extra gitignore-style patterns to exclude.")
    include_secrets: bool = Field(default=False, description="Index .env*, *.pem, *.key, id_rsa*, credentials files.")
    respect_gitignore: bool = Field(default=True, description="Honour .gitignore and .ignore files.")
    text_window_lines: int = Field(default=60, ge=5, description="Line window for text files without structure.")
    max_chunk_lines: int = Field(default=150, ge=20, description="Longer code bodies are split, signature repeated.")
    min_free_disk_mb: int = Field(
        default=64,
        ge=0,
        description="A pass stops with disk_full before the state directory's disk has less free than this.",
    )


class EmbeddingConfig(_Section):
    """Dense embeddings (fastembed, ONNX)."""

    enabled: bool = True
    model_dir: str | None = Field(
        default=None, description="Directory of an ONNX model with tokenizer files; default: the bundled MiniLM int8."
    )
    model_name: str = Field(default="ided/all-MiniLM-L6-v2-qint8", description="Name recorded for the model.")
    dim: int = Field(default=384, ge=1)
    max_tokens: int = Field(default=256, ge=16, le=512, description="Truncation length per chunk.")
    batch_size: int = Field(
        default=32, ge=1, description="Chunks read, tokenized and written at once (each runs through the model alone)."
    )
    threads: int | None = Field(default=None, ge=1, description="ONNX threads; default: all cores.")
    memory_arena: bool = Field(
        default=True,
        description=(
            "Keep onnxruntime's CPU memory arena in the embedding worker: it grows to one text of max_tokens "
            "and is faster than returning memory to glibc, whose heap keeps it anyway."
        ),
    )


class RerankConfig(_Section):
    """Optional cross-encoder rerank of the top hybrid candidates."""

    model_dir: str | None = Field(default=None, description="Local ONNX cross-encoder directory; off when unset.")
    top_n: int = Field(default=20, ge=1, le=200, description="Hybrid candidates the cross-encoder re-scores.")
    max_tokens: int = Field(
        default=64,
        ge=16,
        le=512,
        description="Tokens of one query/passage pair the cross-encoder reads (special tokens included); "
        "the passage is cut to fit. Rerank time grows with it (docs/indexing.md).",
    )


class QdrantConfig(_Section):
    """Where vectors live."""

    mode: Literal["edge", "local", "server"] = Field(
        default="edge",
        description="edge: Qdrant Edge in-process (default); local: qdrant-client local mode; server: a Qdrant URL.",
    )
    url: str | None = Field(default=None, description="Qdrant server URL; setting it implies mode=server.")
    api_key: str | None = None
    collection_prefix: str = "ided"
    collection: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9_-]{1,200}$",
        description="The collection (Edge: shard) to use, instead of the name derived from the state dir; "
        "clones of one repository on several machines that give the same name share one index on a server.",
    )


class SearchConfig(_Section):
    default_k: int = Field(default=10, ge=1, le=200)
    prefetch: int = Field(default=50, ge=1, le=1000, description="Candidates per ranker before fusion.")
    ranker: Literal["auto", "learned", "formula"] = Field(
        default="formula",
        description=(
            "How candidates are ordered: formula (hand-set weights, docs/search.md), learned (a tree ensemble "
            "trained on public history over the same evidence, for every query) or auto (the learned ranker for "
            "queries of one line, the formula for texts of several lines such as issues). A learned model that cannot "
            "be loaded falls back to the formula, with a note."
        ),
    )
    ranker_model: str | None = Field(
        default=None,
        description="With ranker = learned or auto: a model file written by bench/train_ranker.py instead of the "
        "bundled one.",
    )


class DaemonConfig(_Section):
    """The per-workspace daemon (``ided daemon``) that every front attaches to."""

    idle_shutdown_seconds: int = Field(
        default=1800,
        ge=0,
        description="Stop after this long with no client attached, once an editor (lsp/acp) has attached; 0 = never.",
    )
    idle_shutdown_no_editor_seconds: int = Field(
        default=300,
        ge=0,
        description=(
            "Stop after this long with no client attached when no editor (lsp/acp) has ever attached, only agents "
            "(mcp) or commands; at most idle_shutdown_seconds; 0 = use idle_shutdown_seconds."
        ),
    )
    watch: bool = Field(default=True, description="Re-index files as they change on disk.")
    debounce_ms: int = Field(default=50, ge=0, le=5000, description="Quiet time before a burst of changes is indexed.")
    batch_threshold: int = Field(
        default=500, ge=1, description="A burst touching more files than this (a branch switch) runs one full pass."
    )
    start_timeout_seconds: float = Field(default=30.0, gt=0, description="How long an attaching front waits for it.")


class LanguageServerConfig(_Section):
    """One language's server (keyed by language id in ``intel.servers``); unset fields keep the built-in choice."""

    command: str | None = Field(
        default=None, description="Executable name (looked up on intel.search_path, then PATH) or absolute path."
    )
    args: tuple[str, ...] | None = Field(default=None, description="Arguments; default: the built-in server's.")
    enabled: bool = Field(default=True, description="false: never start a server for this language.")
    settings: dict[str, Any] = Field(
        default_factory=dict[str, Any], description="Answers to the server's workspace/configuration requests."
    )


class IntelConfig(_Section):
    """Language servers and Tree-sitter behind the code-intel (MCP) tools."""

    servers: dict[str, LanguageServerConfig] = Field(
        default_factory=dict[str, LanguageServerConfig],
        description="Per language id (python, typescript, javascript, c, cpp, go, rust, java): command, args, enabled.",
    )
    search_path: tuple[str, ...] = Field(
        default=(),
        description=(
            "Directories searched for server executables first (e.g. .tools/lsp-venv/bin); then, in a trusted"
            " workspace, its .venv/bin, venv/bin and node_modules/.bin; then PATH."
        ),
    )
    node_options: str = Field(
        default="--max-semi-space-size=4",
        description="Added to NODE_OPTIONS for the language servers (Node-based ones read it: basedpyright, pyright, "
        "typescript-language-server and its tsserver). The default (semi-spaces of 4 MB) keeps about 100 MB less "
        "per server with answers as fast (bench/node_heap.py); an option the environment's NODE_OPTIONS already sets "
        "wins; empty: NODE_OPTIONS as inherited.",
    )
    request_timeout_seconds: float = Field(default=15.0, gt=0, description="Per language-server request.")
    start_timeout_seconds: float = Field(default=60.0, gt=0, description="Spawn + initialize of one server.")
    ready_wait_seconds: float = Field(
        default=10.0, ge=0, description="How long a call waits for a starting/indexing server before 'not ready'."
    )
    max_restarts: int = Field(
        default=3, ge=0, description="Crashes/hangs within crash_window_seconds before giving up."
    )
    crash_window_seconds: float = Field(default=300.0, gt=0)
    max_open_documents: int = Field(default=64, ge=1, description="Documents kept open per server (LRU).")
    prestart: bool = Field(default=True, description="Start the servers of the workspace's languages at startup.")
    index_on_start: bool = Field(default=True, description="The MCP server runs a lexical index pass at startup.")
    diagnostics_wait_seconds: float = Field(default=5.0, ge=0, description="How long to wait for pushed diagnostics.")
    syntax_timeout_seconds: float = Field(
        default=5.0,
        gt=0,
        description="Time budget of one request's Tree-sitter work on one file (parse and walk); "
        "past it the request answers too_complex.",
    )
    syntax_max_depth: int = Field(
        default=2000,
        ge=16,
        description="Deepest syntax-tree node a request walks to; a point nested deeper answers too_complex.",
    )


class ModelConfig(_Section):
    """One chat-model endpoint: a role's model (``pipeline.models.<role>``) or a fallback named by another."""

    provider: Literal["openai", "anthropic", "replay"] = Field(
        default="openai",
        description="openai: any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp server, LM Studio); "
        "anthropic; replay: scripted answers from pipeline.replay_script.",
    )
    model: str = Field(default="", description="Model name as the endpoint knows it, e.g. qwen2.5-coder:7b.")
    base_url: str | None = Field(default=None, description="Endpoint URL, e.g. http://localhost:11434/v1 (Ollama).")
    api_key_env: str | None = Field(
        default=None, description="Environment variable that holds the API key (the key itself is never in config)."
    )
    timeout_seconds: float = Field(default=120.0, gt=0, description="Per model call.")
    temperature: float | None = Field(default=0.0, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1)
    fallbacks: tuple[str, ...] = Field(
        default=(), description="Other entries of pipeline.models tried in order when this one fails."
    )


class ResilienceConfig(_Section):
    """Every model call: cache, concurrency limit, retries with backoff, circuit breaker."""

    cache: bool = Field(default=True, description="Reuse answers to identical prompts (keyed by content hash).")
    cache_max_entries: int = Field(default=2000, ge=0)
    max_concurrency_per_provider: int = Field(default=4, ge=1, description="Calls in flight per provider endpoint.")
    max_retries: int = Field(default=2, ge=0, description="Retries of a failed call before the next fallback.")
    backoff_initial_seconds: float = Field(default=0.5, ge=0)
    backoff_max_seconds: float = Field(default=8.0, ge=0)
    breaker_failure_threshold: int = Field(default=5, ge=1, description="Consecutive failures that open the circuit.")
    breaker_reset_seconds: float = Field(default=30.0, ge=0, description="How long an open circuit fails fast.")


class CheckpointConfig(_Section):
    """Where LangGraph checkpoints of runs live (run records are kept apart); runs.database_url, when set,
    puts them in that Postgres and these keys are not read."""

    backend: Literal["sqlite", "postgres"] = "sqlite"
    sqlite_path: str | None = Field(default=None, description="Default: <state_dir>/pipeline/checkpoints.sqlite3.")
    postgres_url: str | None = Field(
        default=None, description="postgresql://... (needs the langgraph-checkpoint-postgres package)."
    )


class RunsConfig(_Section):
    """Where run records, decision logs and events live, and with ``database_url`` the checkpoints too
    (docs/scale-out.md)."""

    database_url: str | None = Field(
        default=None,
        description="postgresql://user[:password]@host[:port]/database: runs and LangGraph checkpoints in a shared "
        "Postgres (needs the `postgres` extra: psycopg, langgraph-checkpoint-postgres); unset: SQLite files in the "
        "state dir.",
    )
    workspace_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="Stamped on every run this workspace writes and used by `ided runs --this-workspace`; default "
        "<host>:<workspace path>. Clones of one repository that should share a run list give it one id.",
    )
    connect_timeout_seconds: float = Field(default=10.0, gt=0, description="Connecting to database_url.")

    @field_validator("database_url")
    @classmethod
    def _postgres_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("must be a postgresql:// URL")
        return value


class PipelineConfig(_Section):
    """Workflow runs: models per role, resilience, checkpoints, limits."""

    models: dict[str, ModelConfig] = Field(
        default_factory=dict[str, ModelConfig],
        description="Per role: orchestrator, retrieval, agents (every stage agent), an agent id (coder, reviewer, "
        "...), default (any role); other names serve as fallbacks.",
    )
    replay_script: str | None = Field(
        default=None, description="A JSON/YAML file of scripted answers; when set, every role answers from it."
    )
    selection_retries: int = Field(default=1, ge=0, description="Retries with the validation error before fallback.")
    max_iterations: int = Field(default=50, ge=1, description="Stage runs per workflow run before it aborts.")
    stage_timeout_seconds: float = Field(default=900.0, gt=0, description="Per stage (all its agents).")
    workflow_dirs: tuple[str, ...] = Field(
        default=(), description="Extra directories of workflow YAML files (after workflows/ and .ided/workflows/)."
    )
    resilience: ResilienceConfig = ResilienceConfig()
    checkpoint: CheckpointConfig = CheckpointConfig()
    warm_start: bool = Field(
        default=True,
        description="A daemon whose workspace has a model (models or replay_script) opens its run service in the "
        "background once its first index pass is done and warms what a run's start needs (the query model, a "
        "workflow graph, a spare run worktree), so the first run pays none of it; false: on the first run.",
    )


class VcsConfig(_Section):
    """Run branches: every editing run works in its own git worktree on branch ``ided/run/<id>``."""

    retention_days: int = Field(
        default=14, ge=0, description="`ided runs cleanup` removes worktrees and branches of runs older than this."
    )
    worktrees_dir: str | None = Field(
        default=None, description="Where run worktrees live; default: <state_dir>/worktrees."
    )
    include_uncommitted: bool = Field(
        default=False, description="Runs start from HEAD plus your uncommitted changes (one snapshot commit)."
    )
    spare_worktree: bool = Field(
        default=True,
        description="Keep one worktree checked out ahead (detached, in worktrees_dir) that the next editing run "
        "takes over, so a run on a large repository starts without checking its whole tree out.",
    )


class RetrievalConfig(_Section):
    """The retrieval agent (docs/retrieval.md): which sources it may use, providers, thresholds, timeouts."""

    code: bool = Field(default=True, description="Function-level code search over the index.")
    docs: bool = Field(default=True, description="Section-level docs search over the index.")
    lsp: bool = Field(
        default=True, description="Definitions, references, signatures of named symbols (language servers)."
    )
    decisions: bool = Field(
        default=True, description="Past runs' decision logs and the workspace's ADR/decision documents."
    )
    web: bool = Field(default=False, description="Web search through web_url (SearxNG or Brave).")
    libraries: bool = Field(
        default=True,
        description="The API and docs of the workspace's direct dependencies, read from its environment (.venv "
        "site-packages, node_modules), for queries that name one; their own scope, never the workspace index.",
    )
    advisories: bool = Field(
        default=True,
        description="The advisory (CVE) source: the local OSV mirror at osv_mirror (offline), else the OSV API at "
        "advisory_url when one is set; off with neither.",
    )
    web_provider: Literal["searxng", "brave"] = "searxng"
    web_url: str | None = Field(default=None, description="e.g. http://localhost:8888 (SearxNG) or the Brave API URL.")
    web_api_key_env: str | None = Field(default=None, description="Environment variable holding the web API key.")
    osv_mirror: str | None = Field(
        default=None,
        description="Directory of OSV records (one <ID>.json each, OSV's own format) that the advisory source reads; "
        "relative to the workspace, ~ expanded. `ided cve sync --from DIR|ZIP` fills it from an OSV export.",
    )
    advisory_url: str | None = Field(
        default=None,
        description="An OSV-compatible advisory API (e.g. https://api.osv.dev), asked only when no osv_mirror is set.",
    )
    code_threshold: float = Field(default=0.7, ge=0, le=1, description="Normalized relevance a code piece needs.")
    docs_threshold: float = Field(default=0.6, ge=0, le=1, description="Normalized relevance a document piece needs.")
    outline_threshold: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="A passing piece is given as an outline (signatures and where the rest is) when (1 - its score) "
        "times the tokens the outline saves exceeds (1 - this) * 200; 0: only pieces whose whole text no longer "
        "fits the budget are outlined.",
    )
    min_similarity: float = Field(
        default=0.2,
        ge=-1,
        le=1,
        description="Absolute floor: a searched piece whose cosine to every query is below this is dropped.",
    )
    near_duplicate_cosine: float = Field(default=0.95, gt=0, le=1, description="Cosine above which pieces are one.")
    source_timeout_seconds: float = Field(default=10.0, gt=0, description="Per source per retrieval.")
    upfront_budget_seconds: float = Field(
        default=5.0,
        gt=0,
        description="Upfront retrieval (every planned stage at once, run concurrently): the time all stages share; "
        "a source still searching when it runs out is unavailable for that stage.",
    )
    parallel_searches: int = Field(
        default=4, ge=1, le=64, description="Index searches the retrieval agent runs at once (threads)."
    )
    http_timeout_seconds: float = Field(default=5.0, gt=0, description="Per web/advisory HTTP request.")
    k_per_query: int = Field(default=8, ge=1, le=100, description="Index hits per query and source.")
    focus_pool: int = Field(
        default=40,
        ge=0,
        le=200,
        description="Upfront retrieval: a stage's focus_on hint re-ranks the task's best focus_pool index hits "
        "(searched once for every stage) by the hint's words instead of searching the index itself; "
        "0: each hint is its own index search.",
    )
    max_queries: int = Field(default=6, ge=1, le=30, description="Queries per source per retrieval.")
    decision_globs: tuple[str, ...] = Field(
        default=("*adr/*", "*decisions/*", "*ADR-*", "*decision-record*"),
        description="Globs over workspace paths of ADR/decision documents.",
    )
    breaker_failure_threshold: int = Field(default=3, ge=1, description="Failures in a row that switch a source off.")
    breaker_reset_seconds: float = Field(default=60.0, ge=0, description="How long a tripped source stays off.")


class AgentsConfig(_Section):
    """The specialist agents of workflow runs: the commands they may run and their limits."""

    commands: dict[str, str] = Field(
        default_factory=dict[str, str],
        description='Named command lines agents may run in the run\'s worktree, e.g. test = "python -m pytest -q". '
        "A test_execution stage runs 'test' itself when its agent ran none.",
    )
    command_timeout_seconds: float = Field(default=300.0, gt=0, description="Per command run; the process is killed.")
    output_cap_bytes: int = Field(default=65536, ge=1024, description="Output kept per command (head and tail).")
    max_tool_steps: int = Field(default=25, ge=1, le=500, description="Model turns with tool calls per agent attempt.")


class AcpConfig(_Section):
    """``ided acp``: the Agent Client Protocol front (docs/acp.md)."""

    attach_daemon: bool = Field(
        default=True,
        description=(
            "Attach to the workspace daemon (starting it when none runs): it executes the sessions' runs over its hot "
            "index."
        ),
    )
    cancel_grace_seconds: float = Field(
        default=10.0,
        ge=0,
        description="After session/cancel or a client disconnect: how long to wait for the run to stop "
        "before the prompt answers 'cancelled' (the stage in flight finishes; no further stage starts).",
    )


class RootsConfig(_Section):
    """Which folders ACP and MCP may open as a workspace (docs/configuration.md#roots). User layers only."""

    allowed: tuple[str, ...] = Field(
        default=(),
        description="Folders under which a workspace may be opened (~ expands); empty: the home folder and the "
        "folder ided was started in. System folders (/, /etc, /proc, /sys, /dev, ...) are refused regardless. "
        "Only the user's config, the environment and --set may set it, never a workspace's .ided.toml.",
    )


class LoggingConfig(_Section):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING"
    file: str | None = Field(default=None, description="Log file; default stderr. Never stdout.")


@dataclass(frozen=True, kw_only=True)
class ProjectLayer:
    """What the workspace's ``.ided.toml`` (repository content) contributed, and what was left out of it."""

    file: str | None = None
    """The ``.ided.toml`` that was read (None: none, or a configuration not loaded from files)."""
    commands: dict[str, str] = field(default_factory=dict[str, str])
    """``[agents.commands]`` as the repository's file defines them."""
    own_commands: dict[str, str] | None = None
    """``agents.commands`` from every other layer (defaults, user file, environment, command line);
    None: the configuration was not loaded from files, so all of its commands are the caller's."""
    workflow_dirs: tuple[str, ...] = ()
    """``pipeline.workflow_dirs`` as the repository's file names them."""
    trusted: bool | None = None
    """Whether the user trusts the workspace (None: the configuration was not loaded from files)."""
    refusals: tuple[Refusal, ...] = ()
    """Each key of the repository's file left out because the workspace is not trusted, with why
    (``daemon.repository_settings``)."""
    untrusted_languages: tuple[str, ...] = ()
    """Languages whose server the repository's file chose (``intel.servers.<lang>.command``/``args``),
    withheld: their code-intel calls answer ``workspace_untrusted``."""
    how_to_trust: str = ""

    @property
    def withheld(self) -> tuple[str, ...]:
        """The dotted keys of ``refusals``."""
        return tuple(r.key for r in self.refusals)


class Config(_Section):
    """The whole configuration of one workspace."""

    _project: ProjectLayer = PrivateAttr(default_factory=ProjectLayer)

    workspace: str = Field(default=".", description="Workspace root (resolved to an absolute path).")
    state_dir: str | None = Field(default=None, description="Index and run state; default under the user cache.")
    index: IndexConfig = IndexConfig()
    embedding: EmbeddingConfig = EmbeddingConfig()
    rerank: RerankConfig = RerankConfig()
    qdrant: QdrantConfig = QdrantConfig()
    search: SearchConfig = SearchConfig()
    intel: IntelConfig = IntelConfig()
    daemon: DaemonConfig = DaemonConfig()
    pipeline: PipelineConfig = PipelineConfig()
    runs: RunsConfig = RunsConfig()
    agents: AgentsConfig = AgentsConfig()
    vcs: VcsConfig = VcsConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    acp: AcpConfig = AcpConfig()
    roots: RootsConfig = RootsConfig()
    logging: LoggingConfig = LoggingConfig()

    @property
    def workspace_path(self) -> Path:
        return Path(self.workspace)

    @property
    def project(self) -> ProjectLayer:
        """What the workspace's ``.ided.toml`` contributed to command-running keys (see ``load_config``)."""
        return self._project

    def with_project(self, project: ProjectLayer) -> Config:
        """A copy of this configuration whose ``project`` is ``project`` (the loader records it)."""
        copy = self.model_copy()
        copy._project = project
        return copy

    @property
    def state_path(self) -> Path:
        return Path(self.state_dir) if self.state_dir else default_state_dir(self.workspace_path)


def config_json_schema() -> dict[str, Any]:
    """The published JSON Schema of the configuration (docs/config.schema.json)."""
    return Config.model_json_schema()


def user_config_path(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".config")
    return Path(base) / "ided" / "config.toml"


def default_cache_root(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/ided`` (default ``~/.cache/ided``): models and per-workspace state."""
    env = os.environ if env is None else env
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".cache")
    return Path(base) / "ided"


def default_state_dir(workspace: Path, env: Mapping[str, str] | None = None) -> Path:
    """Per-workspace state under the user cache: ``<cache>/ided/workspaces/<name>-<hash of the path>``."""
    resolved = workspace.resolve()
    digest = hashlib.blake2b(str(resolved).encode(), digest_size=6).hexdigest()
    return default_cache_root(env) / "workspaces" / f"{resolved.name or 'root'}-{digest}"


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        current = out.get(key)
        if isinstance(value, Mapping) and isinstance(current, dict):
            out[key] = _merge(current, value)  # type: ignore[arg-type]
        else:
            out[key] = value
    return out


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    except RecursionError:  # arrays or tables nested thousands deep: the parser recurses
        raise ConfigError(f"{path}: not valid TOML: nested too deep to read") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid TOML: byte {exc.start} is not UTF-8 (TOML files are UTF-8 text)", cause=exc
        ) from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read", cause=exc) from exc


def _env_layer(env: Mapping[str, str]) -> dict[str, Any]:
    """``IDED_QDRANT__URL=http://…`` -> ``{"qdrant": {"url": "http://…"}}``; values parsed as JSON when they are."""
    layer: dict[str, Any] = {}
    for name, raw in env.items():
        if not name.startswith(ENV_PREFIX):
            continue
        keys = name[len(ENV_PREFIX) :].lower().split("__")
        if keys[0] not in Config.model_fields:
            continue  # IDED_CONFIG, IDED_MCP_TOKEN, ...: not configuration keys
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = raw
        node = layer
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        node[keys[-1]] = value
    return layer


def _validate(data: dict[str, Any], sources: list[str]) -> Config:
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        problems: list[str] = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"])
            if err["type"] == "extra_forbidden":
                problems.append(f"unknown key '{where}'")
            else:
                problems.append(f"'{where}': {err['msg']}")
        raise ConfigError(
            "invalid configuration: " + "; ".join(problems) + f" (layers read: {', '.join(sources)})"
        ) from exc


def load_config(
    workspace: Path,
    *,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    user_file: Path | None = None,
) -> Config:
    """Load the configuration for ``workspace`` from every layer and validate it once per layer."""
    env = dict(os.environ) if env is None else dict(env)
    try:
        workspace = workspace.resolve()
        is_dir = workspace.is_dir()
    except OSError as exc:  # ENAMETOOLONG, EACCES...: a path error, named as one
        shown = str(workspace) if len(str(workspace)) <= 200 else str(workspace)[:200] + "…"
        raise WorkspaceRefused(f"workspace {shown} cannot be used: {exc.strerror or exc}") from None
    if not is_dir:
        raise ConfigError(f"workspace {workspace} is not a directory")
    data: dict[str, Any] = {}
    own: dict[str, Any] = {}  # every layer but the repository's
    project_layer: dict[str, Any] = {}
    sources = ["defaults"]
    user = user_file or (Path(env["IDED_CONFIG"]) if "IDED_CONFIG" in env else user_config_path(env))
    project_file = workspace / ".ided.toml"
    trusted = TrustStore.default(env).trusted(workspace)
    refusals: list[Refusal] = []
    for path in (user, project_file):
        if path.is_file():
            layer = _read_toml(path)
            if path != user:
                _refuse_yours(layer, path, user)
            _validate(_merge(data, layer), [*sources, str(path)])  # name the file that brought a bad key
            sources.append(str(path))
            if path == project_file:
                project_layer = layer
                if not trusted:
                    base = _validate(data, sources).model_dump(mode="python")
                    layer, refusals = untrusted_layer(layer, base, Config)
            else:
                own = _merge(own, layer)
            data = _merge(data, layer)
    env_layer = _env_layer(env)
    if env_layer:
        data = _merge(data, env_layer)
        own = _merge(own, env_layer)
        sources.append("environment (IDED_*)")
    if overrides:
        data = _merge(data, overrides)
        own = _merge(own, overrides)
        sources.append("command line")
    data["workspace"] = str(workspace)
    config = _validate(data, sources)
    if config.qdrant.url and config.qdrant.mode != "server":
        config = config.model_copy(update={"qdrant": config.qdrant.model_copy(update={"mode": "server"})})
    project = dataclasses.replace(
        _project_layer(project_file if project_layer else None, project_layer, own),
        trusted=trusted,
        refusals=tuple(refusals),
        untrusted_languages=tuple(
            sorted({r.key.split(".")[2] for r in refusals if _SERVER_EXECUTABLE.fullmatch(r.key)})
        ),
        how_to_trust=how_to_trust(workspace),
    )
    return config.with_project(project)


_SERVER_EXECUTABLE = re.compile(r"intel\.servers\.[^.]+\.(?:command|args)")
"""A language server's executable or arguments: refused, the language's server is the repository's choice."""

_YOURS = tuple(key for key, rule in REPOSITORY_SETTINGS.items() if rule.decision is Decision.YOURS)


def _refuse_yours(layer: Mapping[str, Any], path: Path, user: Path) -> None:
    """``config_invalid`` when a repository's file sets a key only your own layers may (``roots``)."""
    for key in _YOURS:
        section = key.split(".", 1)[0]
        if section in layer:
            raise ConfigError(
                f"{path}: '{section}' may only be set in your own config ({user}), the environment or --set: "
                "a repository cannot widen where ided may open workspaces"
            )


def _table(layer: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    """``layer[k1][k2]...`` when each is a table, else an empty one."""
    node: Mapping[str, Any] = layer
    for key in keys:
        child: object = node.get(key)
        if not isinstance(child, Mapping):
            return {}
        node = cast("Mapping[str, Any]", child)
    return node


def _project_layer(file: Path | None, layer: Mapping[str, Any], own: Mapping[str, Any]) -> ProjectLayer:
    """The command-running keys the repository's file set, and the user's own commands beside them."""
    dirs: object = _table(layer, "pipeline").get("workflow_dirs", ())
    return ProjectLayer(
        file=str(file) if file is not None else None,
        commands={str(k): str(v) for k, v in _table(layer, "agents", "commands").items()},
        own_commands={str(k): str(v) for k, v in _table(own, "agents", "commands").items()},
        workflow_dirs=tuple(str(d) for d in cast("list[object]", dirs)) if isinstance(dirs, list | tuple) else (),
    )


def parse_set_pairs(pairs: list[str]) -> dict[str, Any]:
    """``["daemon.watch=false"]`` -> ``{"daemon": {"watch": False}}`` (values parsed as JSON when they are).

    The inverse of :func:`to_set_pairs`; ValueError names a pair that is not KEY=VALUE.
    """
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"--set expects KEY=VALUE, got {pair!r}")
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = raw
        node = out
        *parents, leaf = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return out


def to_set_pairs(tree: Mapping[str, Any], prefix: str = "") -> list[str]:
    """``{"daemon": {"watch": False}}`` -> ``["daemon.watch=false"]``: overrides for a child process's ``--set``."""
    pairs: list[str] = []
    for key, value in tree.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            pairs.extend(to_set_pairs(cast("Mapping[str, Any]", value), dotted + "."))
        else:
            pairs.append(f"{dotted}={json.dumps(value)}")
    return pairs
