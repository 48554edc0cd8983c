"""The session reader and the formatter: the exact text the models see."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers_sessions import ALPHA_ID, BETA_ID, LONG_RESULT, SECRET, write_sessions

from qualspec.errors import ConfigError
from qualspec.rubrics import (
    ChatSession,
    ToolCall,
    ToolResult,
    Turn,
    fit_to_context,
    format_session,
    read_session,
    read_sessions,
    session_metrics,
    summarize_input,
)
from qualspec.store import redact_text

ALPHA = f"""=== Chat Session ===
Session ID: {ALPHA_ID}
Timestamp: 2025-06-01T10:00:01.000Z
Git Branch: feature/verbose
Working Directory: /home/dev/proj

--- Turn 1 ---
[USER]
Add a --verbose flag to cli.py that prints each file it processes.

[ASSISTANT]
I'll read cli.py first.

Added `--verbose`; each processed file is printed.

[TOOL_CALLS]
- Read: file_path="/home/dev/proj/cli.py"
- Edit: file_path="/home/dev/proj/cli.py"

[TOOL_RESULTS]
- Read: {LONG_RESULT[:500]}... (truncated)
- Edit: The file cli.py has been updated.

--- Turn 2 ---
[USER]
Now add a test and run it. The CI key is *** if needed.

[ASSISTANT]
The `run` fixture is missing; I'll add it to conftest.py.

[TOOL_CALLS]
- Write: file_path="/home/dev/proj/tests/test_verbose.py"
- Bash: command="pytest -q tests/test_verbose.py", description="Run it"

[TOOL_RESULTS]
- Write: File created successfully.
- Bash (error): E   fixture 'run' not found
1 error in 0.02s

=== End Session ===
Total Turns: 2"""

BETA = f"""=== Chat Session ===
Session ID: {BETA_ID}
Timestamp: 2025-06-02T08:30:00.000Z
Working Directory: /srv/app

--- Turn 1 ---
[USER]
What does `make lint` run?

[ASSISTANT]
It runs ruff and mypy.

--- Turn 2 ---
[USER]
[image]

And this error?

=== End Session ===
Total Turns: 2"""

CHAT = """=== Chat Session ===
Session ID: chat
Timestamp: unknown
Working Directory: unknown

--- Turn 1 ---
[USER]
Rename foo to bar in utils.py

[ASSISTANT]
Renaming.

Done: foo is now bar.

[TOOL_CALLS]
- edit_file: path="utils.py"

[TOOL_RESULTS]
- edit_file: ok

=== End Session ===
Total Turns: 1"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return write_sessions(tmp_path / "sessions")


def test_claude_code_session_formats_exactly(folder: Path) -> None:
    session = read_session(folder / f"{ALPHA_ID}.jsonl")
    assert format_session(session) == ALPHA
    assert LONG_RESULT[500:520] not in ALPHA  # the cut really cuts


def test_short_session_without_branch_and_plain_chat_format_exactly(folder: Path) -> None:
    assert format_session(read_session(folder / f"{BETA_ID}.jsonl")) == BETA
    chat = read_session(folder / "chat.json")
    assert chat.format == "chat" and format_session(chat) == CHAT


def test_thinking_snapshots_sidechains_and_secrets_never_reach_the_text(folder: Path) -> None:
    text = format_session(read_session(folder / f"{ALPHA_ID}.jsonl"))
    for hidden in (
        "SECRET PLAN",
        "trackedFileBackups",
        "Search for existing tests",
        "Found tests/test_cli.py",
        "/clear",
        "compacted",
        SECRET,
        "Verbose flag for",
    ):
        assert hidden not in text, hidden


def test_what_was_skipped_is_counted_and_unreadable_lines_warned(folder: Path) -> None:
    session = read_session(folder / f"{ALPHA_ID}.jsonl")
    assert session.skipped == {
        "summary": 1,
        "file-history-snapshot": 1,
        "meta": 1,
        "sidechain": 2,
        "system": 1,
    }
    assert session.warnings == ["line 13: not JSON", "line 10: unknown record type 'progress'"]
    line = session.warning_line()
    assert line is not None and "skipped 2 unreadable record(s)" in line
    assert read_session(folder / f"{BETA_ID}.jsonl").warning_line() is None


def test_tool_results_are_not_user_turns_and_replies_group_by_message_id(folder: Path) -> None:
    session = read_session(folder / f"{ALPHA_ID}.jsonl")
    assert [t.user[:12] for t in session.turns] == ["Add a --verb", "Now add a te"]
    first = session.turns[0]
    assert [c.name for c in first.tool_calls] == ["Read", "Edit"]
    assert [r.name for r in first.tool_results] == ["Read", "Edit"]
    assert [r.is_error for r in session.turns[1].tool_results] == [False, True]
    # msg_01 was written over three lines: its usage counts once
    assert len(session.usage) == 5


def test_metrics_count_tokens_once_per_reply_and_code_growth(folder: Path) -> None:
    metrics = session_metrics(read_session(folder / f"{ALPHA_ID}.jsonl"))
    # msg_01 1200+300+40, msg_02 1800+120, msg_03 2000+30, msg_04 2500+200, msg_05 2600+60
    assert metrics.tokens == 10850
    # Edit: 3 new lines for 1 old (+2); Write: 3 lines
    assert metrics.code_growth == 5
    assert metrics.turns == 2 and metrics.user_turns == 2
    assert metrics.token_efficiency == round(5 * 1000 / 10850, 4)
    assert metrics.user_turn_efficiency == 2.5
    chat = session_metrics(read_session(folder / "chat.json"))
    assert chat.tokens == 0 and chat.token_efficiency is None


def test_a_directory_reads_every_session_and_empty_ones_are_left_out(folder: Path) -> None:
    (folder / "empty.jsonl").write_text('{"type": "summary", "summary": "x"}\n')
    (folder / "notes.txt").write_text("not a session")
    ids = [s.session_id for s in read_sessions(folder)]
    assert ids == [ALPHA_ID, BETA_ID, "chat"]


def test_missing_fields_and_odd_records_survive(tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    records = [
        {"type": "user"},  # no message
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "early"}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result"}]}},
        [1, 2],
        {"type": "user", "message": {"role": "user", "content": "hello"}},
        {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "X"}]}},
    ]
    path.write_text("\n".join(json.dumps(r) for r in records))
    session = read_session(path)
    assert session.session_id == "odd" and len(session.turns) == 2
    assert session.turns[0].assistant == ["early"] and session.turns[0].user == ""
    assert session.turns[1].tool_calls[0].input == {}
    assert len(session.warnings) == 2
    text = format_session(session)
    assert "[USER]\n(no message)" in text and "- X: (no input)" in text
    assert text.endswith("Total Turns: 2")


def test_a_broken_json_file_is_one_line_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('[\n {"role": "user", "content": "hi"},\n oops\n]')
    with pytest.raises(ConfigError, match=r"bad\.json:3: not valid JSON"):
        read_session(path)
    with pytest.raises(ConfigError, match="no such file or directory"):
        read_sessions(tmp_path / "nowhere")


def test_tool_input_summary_keeps_key_parameters_only() -> None:
    assert summarize_input(ToolCall("1", "Grep", {"pattern": "def x", "path": "src"})) == (
        'path="src", pattern="def x"'
    )
    long = ToolCall("2", "Bash", {"command": "echo " + "a" * 200})
    assert summarize_input(long) == 'command="echo ' + "a" * 115 + '..."'
    custom = ToolCall("3", "Custom", {"alpha": 1, "content": "big", "beta": [1, 2]})
    assert summarize_input(custom) == 'alpha="1", beta="[1, 2]"'


def test_long_sessions_are_cut_with_a_visible_marker() -> None:
    session = ChatSession(
        session_id="long", turns=[Turn(user=f"request {i} " + "x" * 200) for i in range(50)]
    )
    full = format_session(session)
    cut = fit_to_context(full, 2000)
    assert len(cut) <= 2000
    assert "characters of the session cut here to fit the model's context" in cut
    assert cut.startswith("=== Chat Session ===") and cut.endswith("Total Turns: 50")
    assert fit_to_context(full, len(full)) == full


# ---------------------------------------------------------------- issue 17, item 18

ANTHROPIC_KEY = "sk-ant-api03-cQkXgboR4xNqZ7w0pL9sT2vY5uB8eD1fH4jK6mN3rA0cE9gI2lO5"


def _session_with(result: str, **params: str) -> ChatSession:
    call = ToolCall("t1", "Bash", dict(params) or {"command": "cat .env"})
    return ChatSession(
        session_id="s",
        turns=[Turn(user="go", tool_calls=[call], tool_results=[ToolResult("t1", "Bash", result)])],
    )


@pytest.mark.parametrize("start", [470, 476, 490, 496])
def test_a_key_across_the_result_cut_is_hidden_whole(start: int) -> None:
    # the key starts before the 500-character cut and ends after it
    result = "x" * (start - 1) + " " + ANTHROPIC_KEY + " " + "z" * 100
    text = format_session(_session_with(result))
    (line,) = [x for x in text.splitlines() if x.startswith("- Bash: x")]
    assert "sk-ant" not in text and "cQkXgbo" not in text, line[-60:]
    assert " ***" in line and line.endswith("... (truncated)"), line[-60:]


def test_a_key_across_the_input_cut_is_hidden_whole() -> None:
    # the 120-character cut of an input value would leave "sk-proj-" and 11 characters
    command = "echo " + "y" * 95 + " sk-proj-" + "a" * 40
    text = format_session(_session_with("ok", command=command))
    (line,) = [x for x in text.splitlines() if x.startswith("- Bash: command=")]
    assert "sk-proj" not in line and "aaaaaa" not in line, line
    assert line.endswith('y ***"'), line  # shorter than the cut once hidden
    long = "export OPENAI_API_KEY=" + "b" * 30 + " && echo " + "y" * 150
    text = format_session(_session_with("ok", command=long))
    (line,) = [x for x in text.splitlines() if x.startswith("- Bash: command=")]
    assert "OPENAI_API_KEY=*** && echo yyy" in line and line.endswith('..."'), line


def test_a_value_hidden_by_its_name_keeps_the_cut_marker() -> None:
    result = "x" * 480 + " password: " + "p" * 40 + " " + "z" * 600
    text = format_session(_session_with(result))
    (line,) = [x for x in text.splitlines() if x.startswith("- Bash: x")]
    assert "password: ***" in line and "ppp" not in line
    assert line.endswith("... (truncated)"), line[-60:]
    # a name-hidden value that a cut ends in keeps the marker too
    assert redact_text("token=" + "q" * 30 + "... (truncated)") == "token=***... (truncated)"
