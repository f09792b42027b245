"""Chat models per role, from configuration: OpenAI-compatible endpoints, Anthropic, the replay script.

Roles: ``orchestrator`` (workflow selection), ``retrieval`` (query writing for adaptive retrieval,
optional) and one per agent (its ``role`` in the workflow, default its ``agent_id``). A role's model
is the ``pipeline.models`` entry named after the role; an agent role falls back to the ``agents``
entry; every role falls back to ``default``. Each entry's ``fallbacks`` name other entries tried in
order when it fails (see ``resilience``).

Providers: ``openai`` is any OpenAI-compatible server (OpenAI, Ollama ``http://localhost:11434/v1``,
vLLM, llama.cpp server, LM Studio) through langchain-openai's ``ChatOpenAI`` with ``base_url``;
``anthropic`` through langchain-anthropic; ``replay`` answers from ``pipeline.replay_script``. When
``pipeline.replay_script`` is set every role answers from it, whatever the entries say (the optional
``retrieval`` role only when the script has an entry for it by name).

API keys are read from the environment variable an entry names (``api_key_env``); the caller passes
the environment in (only the composition root reads ``os.environ``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from daemon.config import ModelConfig, PipelineConfig
from daemon.errors import ConfigError, ErrorCode, PipelineError
from daemon.orchestration.replay_provider import ReplayChatModel, ReplayScript
from daemon.orchestration.resilience import ChatCaller, ModelEndpoint, ResilienceLayer, ResilientChat

__all__ = [
    "AGENTS_ROLE",
    "DEFAULT_ROLE",
    "EVALUATOR_ROLE",
    "ORCHESTRATOR_ROLE",
    "REFLECTOR_ROLE",
    "RETRIEVAL_ROLE",
    "ModelRegistry",
    "build_chat_model",
    "role_candidates",
]


ORCHESTRATOR_ROLE = "orchestrator"
RETRIEVAL_ROLE = "retrieval"
REFLECTOR_ROLE = "reflector"
EVALUATOR_ROLE = "evaluator"
AGENTS_ROLE = "agents"
DEFAULT_ROLE = "default"
_NON_AGENT_ROLES = frozenset({ORCHESTRATOR_ROLE, RETRIEVAL_ROLE, REFLECTOR_ROLE, EVALUATOR_ROLE})
_NAMED_ONLY_ROLES = frozenset({RETRIEVAL_ROLE, REFLECTOR_ROLE, EVALUATOR_ROLE})
"""Optional roles a replay script serves only when one of its entries names them."""


def role_candidates(role: str) -> list[str]:
    """Entry names tried for ``role``, in order."""
    out = [role]
    if role not in _NON_AGENT_ROLES and role not in (AGENTS_ROLE, DEFAULT_ROLE):
        out.append(AGENTS_ROLE)
    if role != DEFAULT_ROLE:
        out.append(DEFAULT_ROLE)
    return out


def _api_key(name: str, entry: ModelConfig, env: Mapping[str, str]) -> SecretStr | None:
    if entry.api_key_env is None:
        return None
    value = env.get(entry.api_key_env)
    if not value:
        raise ConfigError(f"pipeline.models.{name}: the environment variable {entry.api_key_env} is not set")
    return SecretStr(value)


def build_chat_model(name: str, entry: ModelConfig, env: Mapping[str, str]) -> BaseChatModel:
    """The LangChain chat model of one ``pipeline.models`` entry (provider openai or anthropic)."""
    if not entry.model:
        raise ConfigError(f"pipeline.models.{name}.model is empty: name the model the endpoint serves")
    key = _api_key(name, entry, env)
    if entry.provider == "openai":
        from langchain_openai import ChatOpenAI

        if key is None and entry.base_url is None:
            raise ConfigError(f"pipeline.models.{name}: set base_url (a local OpenAI-compatible server) or api_key_env")
        return ChatOpenAI(
            model=entry.model,
            base_url=entry.base_url,
            api_key=key or SecretStr("not-needed"),
            timeout=entry.timeout_seconds,
            max_retries=0,
            temperature=entry.temperature,
            max_completion_tokens=entry.max_tokens,
        )
    if entry.provider == "anthropic":
        from langchain_anthropic import ChatAnthropic

        if key is None:
            raise ConfigError(f"pipeline.models.{name}: set api_key_env (e.g. ANTHROPIC_API_KEY)")
        return ChatAnthropic(
            model_name=entry.model,
            base_url=entry.base_url,
            api_key=key,
            timeout=entry.timeout_seconds,
            max_retries=0,
            temperature=entry.temperature,
            max_tokens_to_sample=entry.max_tokens or 4096,
            stop=None,
        )
    raise ConfigError(f"pipeline.models.{name}: provider 'replay' needs pipeline.replay_script")


ChainFactory = Callable[[str], list[ModelEndpoint] | None]


class ModelRegistry:
    """Hands out one resilient ``ChatCaller`` per role; ``None`` when no model serves the role."""

    def __init__(self, chains: ChainFactory, layer: ResilienceLayer, *, description: str) -> None:
        self._chains = chains
        self._callers: dict[str, ChatCaller | None] = {}
        self.layer = layer
        self.description = description

    @classmethod
    def from_config(
        cls,
        config: PipelineConfig,
        *,
        env: Mapping[str, str],
        layer: ResilienceLayer,
        workspace: Path | None = None,
    ) -> ModelRegistry:
        if config.replay_script:
            path = Path(config.replay_script)
            if not path.is_absolute() and workspace is not None:
                path = workspace / path
            script = ReplayScript.load(path)

            def replay_chain(role: str) -> list[ModelEndpoint] | None:
                if role in _NAMED_ONLY_ROLES and not any(e.role == role for e in script.entries):
                    return None  # the optional query writer, reflector and evaluator answer only when named
                model = ReplayChatModel(script=script, role=role)
                return [ModelEndpoint(name=role, provider="replay", model=path.name, chat_model=model)]

            return cls(replay_chain, layer, description=f"replay script {path}")
        models = config.models
        built: dict[str, ModelEndpoint] = {}

        def endpoint(name: str) -> ModelEndpoint:
            if name not in built:
                entry = models[name]
                if entry.provider == "replay":
                    raise ConfigError(f"pipeline.models.{name}: provider 'replay' needs pipeline.replay_script")
                built[name] = ModelEndpoint(
                    name=name,
                    provider=entry.provider,
                    model=entry.model,
                    chat_model=build_chat_model(name, entry, env),
                    timeout_seconds=entry.timeout_seconds,
                    provider_key=f"{entry.provider}:{entry.base_url or 'default'}",
                )
            return built[name]

        def config_chain(role: str) -> list[ModelEndpoint] | None:
            first = next((n for n in role_candidates(role) if n in models), None)
            if first is None:
                return None
            order: list[str] = []
            pending = [first]
            while pending:
                name = pending.pop(0)
                if name in order:
                    continue
                if name not in models:
                    raise ConfigError(f"pipeline.models: fallback '{name}' is not a configured entry")
                order.append(name)
                pending.extend(models[name].fallbacks)
            return [endpoint(n) for n in order]

        names = ", ".join(sorted(models)) or "none"
        return cls(config_chain, layer, description=f"models: {names}")

    @classmethod
    def from_models(
        cls, models: Mapping[str, BaseChatModel | Sequence[BaseChatModel]], layer: ResilienceLayer
    ) -> ModelRegistry:
        """Chat models given directly, keyed like ``pipeline.models`` (tests, embedders)."""

        def chain(role: str) -> list[ModelEndpoint] | None:
            name = next((n for n in role_candidates(role) if n in models), None)
            if name is None:
                return None
            given = models[name]
            items = [given] if isinstance(given, BaseChatModel) else list(given)
            return [
                ModelEndpoint(name=f"{name}#{i}" if i else name, provider="custom", model=m.get_name(), chat_model=m)
                for i, m in enumerate(items)
            ]

        return cls(chain, layer, description="models: " + (", ".join(sorted(models)) or "none"))

    @classmethod
    def none(cls, layer: ResilienceLayer) -> ModelRegistry:
        return cls(lambda _role: None, layer, description="no model configured")

    def caller(self, role: str) -> ChatCaller | None:
        if role not in self._callers:
            chain = self._chains(role)
            self._callers[role] = ResilientChat(self.layer, chain, role=role) if chain else None
        return self._callers[role]

    def agent_caller(self, role: str) -> ChatCaller:
        """The caller of an agent's model role; ``PipelineError(model_unavailable)`` when no model serves it."""
        caller = self.caller(role)
        if caller is None:
            raise PipelineError(
                f"no model serves agent role '{role}' (pipeline.models.{role}, .agents or .default)",
                code=ErrorCode.MODEL_UNAVAILABLE,
            )
        return caller

    def missing(self, roles: Sequence[str]) -> list[str]:
        """The roles among ``roles`` that no model serves."""
        return [r for r in dict.fromkeys(roles) if self.caller(r) is None]

    def close(self) -> None:
        self.layer.close()
