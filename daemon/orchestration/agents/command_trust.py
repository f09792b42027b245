"""Which named commands a run's agents may run: the user's own always, the repository's only when trusted.

Commands come from three places: the user's own configuration (user file, environment, command
line), the workspace's ``.ided.toml`` (``[agents.commands]``) and a workflow file's ``commands:``.
The ``.ided.toml`` and workflow files that lie in the workspace (or in a workflow directory the
``.ided.toml`` names) are repository content: someone else may have written them, so their commands
run only in a workspace the user trusts (``daemon.trust``). An untrusted run still gets the user's
own commands and the built-in workflows' commands; what it does not get is listed as ``withheld``,
with where it came from, so the run can say why. On a name clash the repository's command wins
when trusted and the user's own runs when not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from daemon.core.run_models import RunCommands, WithheldCommand
from daemon.core.workflow_schema import Workflow
from daemon.errors import WorkspaceUntrusted

__all__ = ["CommandSources"]


def _always() -> bool:
    return True


@dataclass(frozen=True, kw_only=True)
class CommandSources:
    """Where a runtime's commands come from and whether the repository's may run."""

    own: Mapping[str, str] = field(default_factory=dict[str, str])
    """The user's own commands (user file, environment, command line, or what a host passed)."""
    repository: Mapping[str, str] = field(default_factory=dict[str, str])
    """``[agents.commands]`` of the workspace's ``.ided.toml``."""
    repository_file: str = ".ided.toml"
    repository_workflows: Mapping[str, str] = field(default_factory=dict[str, str])
    """Workflow name -> file, for the workflows that are repository content."""
    trusted: Callable[[], bool] = _always
    """Whether the user trusts the workspace now (asked at each run: ``ided trust`` may have changed it)."""
    how_to_trust: str = "ided trust ."

    @classmethod
    def given(cls, commands: Mapping[str, str]) -> CommandSources:
        """Commands a host passed itself (no repository layer): all of them are the caller's own."""
        return cls(own=dict(commands))

    def repository_defined(self, workflows: Mapping[str, Workflow]) -> dict[str, tuple[str, str]]:
        """Every repository command (name -> (command line, source file)) of ``.ided.toml`` and ``workflows``."""
        found: dict[str, tuple[str, str]] = {}
        for name, source in self.repository_workflows.items():
            workflow = workflows.get(name)
            if workflow is not None:
                found.update({n: (line, source) for n, line in workflow.commands.items()})
        found.update({n: (line, self.repository_file) for n, line in self.repository.items()})
        return found

    def needs_trust(self, workflows: Mapping[str, Workflow]) -> bool:
        """Whether some repository command would be withheld now (so a front should ask)."""
        return bool(self.repository_defined(workflows)) and not self.trusted()

    def refusal(self, workflows: Mapping[str, Workflow]) -> WorkspaceUntrusted | None:
        """The error a front that cannot ask raises when repository commands would be withheld (else None)."""
        if not self.needs_trust(workflows):
            return None
        defined = self.repository_defined(workflows)
        listed = ", ".join(f"'{name}' ({source})" for name, (_, source) in sorted(defined.items()))
        return WorkspaceUntrusted(
            f"this workspace is not trusted and its repository defines commands for agents: {listed}. "
            f"Commands from a repository run only in a workspace you trust: run `{self.how_to_trust}` "
            "(docs/configuration.md, Workspace trust), or start the run where you can be asked (ided run, ACP)",
            how_to_trust=self.how_to_trust,
        )

    def for_run(self, workflow_name: str | None, workflow: Workflow | None, *, trusted: bool) -> RunCommands:
        """The run's commands: the workflow's, then the user's own, then (trusted) the repository's."""
        named: dict[str, str] = {}
        withheld: list[WithheldCommand] = []
        wf_source = self.repository_workflows.get(workflow_name or "") if workflow is not None else None
        if workflow is not None:
            if wf_source is None or trusted:
                named.update(workflow.commands)
            else:
                withheld.extend(WithheldCommand(name=n, line=c, source=wf_source) for n, c in workflow.commands.items())
        named.update(self.own)
        if trusted:
            named.update(self.repository)
        else:
            withheld.extend(
                WithheldCommand(name=n, line=c, source=self.repository_file) for n, c in self.repository.items()
            )
        return RunCommands(named=named, withheld=tuple(withheld), how_to_trust=self.how_to_trust)
