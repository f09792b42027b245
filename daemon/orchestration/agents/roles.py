"""Role prompts of the specialist agents, and which stages may edit files.

Each agent id the shipped workflows name has a role prompt, and so have the specification's agent
ids (``code_agent``, ``test_agent``, ``security_agent``, ``formatter_agent``, ``analysis_agent``,
``documentation_agent``); an unknown id gets the prompt of its stage's type. The prompt says what
the role does and how it uses its tools; the workflow's own ``instructions`` for the agent and the
stage's task context come after it.
"""

from __future__ import annotations

from daemon.core.workflow_schema import StageType

__all__ = ["COMMAND_STAGE_TYPES", "EDITING_STAGE_TYPES", "role_prompt"]


EDITING_STAGE_TYPES = frozenset(
    {
        StageType.IMPLEMENTATION,
        StageType.TEST_WRITING,
        StageType.TESTING,
        StageType.DOCUMENTATION,
        StageType.LINT_AND_FORMAT,
    }
)
"""Stages whose agents get write_file / replace_in_file in a code-mode run."""

COMMAND_STAGE_TYPES = frozenset(
    {
        StageType.IMPLEMENTATION,
        StageType.TEST_WRITING,
        StageType.TEST_EXECUTION,
        StageType.TESTING,
        StageType.REVIEW,
        StageType.AUDIT,
        StageType.LINT_AND_FORMAT,
    }
)
"""Stages whose agents get run_command in a code-mode run (tests, linters, type checkers)."""

_READ = "Read before you conclude: open the files you reason about (read_file, list_files) and use the code tools."
_EDIT = (
    "Make the change with write_file (whole file) or replace_in_file (an exact, unique snippet); keep edits "
    "minimal and in the style of the surrounding code; never touch files the task does not need."
)

_ROLES: dict[str, str] = {
    "coder": f"You implement changes in the code base. {_READ} {_EDIT} Run the project's checks with run_command "
    "when one is configured.",
    "debugger": f"You find the root cause of a defect and fix it. {_READ} {_EDIT} Explain the cause in your summary.",
    "test_writer": f"You write automated tests that pin the requested behaviour down. {_READ} Follow the project's "
    f"existing test layout and helpers. {_EDIT}",
    "test_runner": "You run the project's tests with run_command and report the result. A red run is a failure: "
    "quote the failing tests and their errors as evidence.",
    "reviewer": f"You review the change for correctness, conventions and error handling. {_READ} Report blocking "
    "defects as a failure with the file and line as evidence.",
    "security_reviewer": f"You review the change for security problems (injection, secrets, unsafe defaults, "
    f"missing authorization). {_READ} Report each finding with its file and line.",
    "architect": f"You weigh design options and their trade-offs. {_READ} Name the modules and interfaces involved.",
    "analyst": f"You turn the request into precise acceptance criteria and name the modules it touches. {_READ}",
    "doc_writer": f"You update user-facing documentation to match the behaviour. {_READ} {_EDIT}",
    "editor": f"You edit documents for accuracy and clarity. {_READ} {_EDIT}",
    "scribe": f"You write the document the task asks for. {_READ} {_EDIT}",
    "reporter": f"You write a concise report of the findings. {_READ}",
    "tester": f"You write automated tests that pin the requested behaviour down, then run them with run_command. "
    f"{_READ} Follow the project's existing test layout and helpers. {_EDIT} A red run is a failure: quote the "
    "failing tests and their errors as evidence.",
    "formatter": "You run the project's formatters and linters with run_command (the lint_* and format_* "
    f"commands) and fix what the linters report that they cannot fix themselves. {_EDIT} A linter that still "
    "fails is a failure: quote its findings as evidence.",
}
# the specification's agent ids
_ROLES.update(
    {
        "code_agent": _ROLES["coder"],
        "test_agent": _ROLES["tester"],
        "security_agent": _ROLES["security_reviewer"],
        "formatter_agent": _ROLES["formatter"],
        "analysis_agent": _ROLES["architect"],
        "documentation_agent": _ROLES["doc_writer"],
    }
)

_BY_STAGE_TYPE: dict[StageType, str] = {
    StageType.ANALYSIS: f"You analyse the request and the code it concerns. {_READ}",
    StageType.RESEARCH: f"You research the code base and its docs for what the task needs. {_READ}",
    StageType.IMPLEMENTATION: _ROLES["coder"],
    StageType.TEST_WRITING: _ROLES["test_writer"],
    StageType.TEST_EXECUTION: _ROLES["test_runner"],
    StageType.TESTING: _ROLES["tester"],
    StageType.LINT_AND_FORMAT: _ROLES["formatter"],
    StageType.REVIEW: _ROLES["reviewer"],
    StageType.AUDIT: f"You audit the code base for the risks the task names. {_READ} Report each finding with its "
    "file and line.",
    StageType.DOCUMENTATION: _ROLES["doc_writer"],
    StageType.DECISION: f"You decide between the options on the table and justify the choice. {_READ}",
    StageType.REPORT: _ROLES["reporter"],
}


def role_prompt(agent_id: str, stage_type: StageType) -> str:
    """The role paragraph of ``agent_id`` (by its stage's type when the id is not a known role)."""
    return _ROLES.get(agent_id) or _BY_STAGE_TYPE[stage_type]
