"""Session files for the rubric tests, written record by record as Claude Code writes them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ALPHA_ID = "0a1b2c3d-1111-4222-8333-444455556666"
BETA_ID = "9f8e7d6c-aaaa-4bbb-8ccc-ddddeeeeffff"
SECRET = "sk-ant-api03-EXAMPLE0000EXAMPLE0000EXAMPLE"
LONG_RESULT = "\n".join(f"{i:>4}  line {i} of cli.py: print('processing', path)" for i in range(30))


def _envelope(session_id: str, uuid: str, parent: str | None, ts: str, **extra: Any) -> dict:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/proj",
        "sessionId": session_id,
        "version": "1.0.51",
        "gitBranch": "feature/verbose",
        "uuid": uuid,
        "timestamp": ts,
        **extra,
    }


def _user(sid: str, uuid: str, parent: str | None, ts: str, content: Any, **extra: Any) -> dict:
    record = _envelope(sid, uuid, parent, ts, **extra)
    record |= {"type": "user", "message": {"role": "user", "content": content}}
    return record


def _assistant(
    sid: str, uuid: str, parent: str, ts: str, msg_id: str, block: dict, usage: dict, **extra: Any
) -> dict:
    record = _envelope(sid, uuid, parent, ts, **extra)
    record |= {
        "type": "assistant",
        "requestId": f"req_{msg_id}",
        "message": {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-20250514",
            "content": [block],
            "stop_reason": None,
            "usage": usage,
        },
    }
    return record


def _usage(inp: int, out: int, cache_read: int = 0) -> dict:
    return {
        "input_tokens": inp,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": cache_read,
        "output_tokens": out,
        "service_tier": "standard",
    }


def alpha_lines() -> list[str]:
    """A realistic session: snapshots, thinking, multi-block replies, a tool error, a
    sidechain, meta and system records, a summary, an unknown type and an invalid line."""
    s = ALPHA_ID
    t = "2025-06-01T10:00:{:02d}.000Z".format
    u1 = _usage(1200, 40, cache_read=300)
    u2 = _usage(1800, 120)
    u4 = _usage(2500, 200)
    records: list[Any] = [
        {"type": "summary", "summary": "Verbose flag for the CLI", "leafUuid": "x-9"},
        {
            "type": "file-history-snapshot",
            "messageId": "snap-1",
            "snapshot": {"trackedFileBackups": {"cli.py": {"version": 1}}},
            "isSnapshotUpdate": False,
        },
        _user(
            s,
            "m-1",
            None,
            t(0),
            "<command-name>/clear</command-name>",
            isMeta=True,
        ),
        _user(
            s,
            "u-1",
            None,
            t(1),
            "Add a --verbose flag to cli.py that prints each file it processes.",
        ),
        _assistant(
            s,
            "a-1",
            "u-1",
            t(2),
            "msg_01",
            {
                "type": "thinking",
                "thinking": "The user wants a flag. SECRET PLAN",
                "signature": "x",
            },
            u1,
        ),
        _assistant(
            s, "a-2", "a-1", t(3), "msg_01", {"type": "text", "text": "I'll read cli.py first."}, u1
        ),
        _assistant(
            s,
            "a-3",
            "a-2",
            t(4),
            "msg_01",
            {
                "type": "tool_use",
                "id": "toolu_01",
                "name": "Read",
                "input": {"file_path": "/home/dev/proj/cli.py"},
            },
            u1,
        ),
        _user(
            s,
            "u-2",
            "a-3",
            t(5),
            [{"tool_use_id": "toolu_01", "type": "tool_result", "content": LONG_RESULT}],
            toolUseResult={"type": "text"},
        ),
        _assistant(
            s,
            "a-4",
            "u-2",
            t(6),
            "msg_02",
            {
                "type": "tool_use",
                "id": "toolu_02",
                "name": "Edit",
                "input": {
                    "file_path": "/home/dev/proj/cli.py",
                    "old_string": "    args = parser.parse_args()",
                    "new_string": (
                        '    parser.add_argument("--verbose", action="store_true")\n'
                        "    args = parser.parse_args()\n"
                        "    log = print if args.verbose else (lambda *a: None)"
                    ),
                },
            },
            u2,
        ),
        {"type": "progress", "data": {"step": 3}},  # a record type not known here
        _user(
            s,
            "u-3",
            "a-4",
            t(7),
            [
                {
                    "tool_use_id": "toolu_02",
                    "type": "tool_result",
                    "content": [{"type": "text", "text": "The file cli.py has been updated."}],
                }
            ],
        ),
        _assistant(
            s,
            "a-5",
            "u-3",
            t(8),
            "msg_03",
            {"type": "text", "text": "Added `--verbose`; each processed file is printed."},
            _usage(2000, 30),
        ),
        "{this line is not json",
        _user(
            s,
            "u-4",
            "a-5",
            t(9),
            [
                {
                    "type": "text",
                    "text": f"Now add a test and run it. The CI key is {SECRET} if needed.",
                }
            ],
        ),
        # a sub-agent's work: not the main thread
        _user(s, "sc-1", "u-4", t(10), "Search for existing tests", isSidechain=True),
        _assistant(
            s,
            "sc-2",
            "sc-1",
            t(11),
            "msg_sc",
            {"type": "text", "text": "Found tests/test_cli.py"},
            _usage(500, 10),
            isSidechain=True,
        ),
        _assistant(
            s,
            "a-6",
            "u-4",
            t(12),
            "msg_04",
            {
                "type": "tool_use",
                "id": "toolu_03",
                "name": "Write",
                "input": {
                    "file_path": "/home/dev/proj/tests/test_verbose.py",
                    "content": "def test_verbose(run):\n    out = run('--verbose', 'a.txt')\n"
                    "    assert 'a.txt' in out\n",
                },
            },
            u4,
        ),
        _assistant(
            s,
            "a-7",
            "a-6",
            t(13),
            "msg_04",
            {
                "type": "tool_use",
                "id": "toolu_04",
                "name": "Bash",
                "input": {"command": "pytest -q tests/test_verbose.py", "description": "Run it"},
            },
            u4,
        ),
        _user(
            s,
            "u-5",
            "a-7",
            t(14),
            [
                {
                    "tool_use_id": "toolu_03",
                    "type": "tool_result",
                    "content": "File created successfully.",
                },
                {
                    "tool_use_id": "toolu_04",
                    "type": "tool_result",
                    "content": "E   fixture 'run' not found\n1 error in 0.02s",
                    "is_error": True,
                },
            ],
        ),
        {"type": "system", "subtype": "compact", "content": "Conversation compacted"},
        _assistant(
            s,
            "a-8",
            "u-5",
            t(15),
            "msg_05",
            {"type": "text", "text": "The `run` fixture is missing; I'll add it to conftest.py."},
            _usage(2600, 60),
        ),
    ]
    return [r if isinstance(r, str) else json.dumps(r) for r in records]


def beta_lines() -> list[str]:
    """A short session without a git branch: string content, an image, one answer."""
    s = BETA_ID
    user = _user(s, "b-1", None, "2025-06-02T08:30:00.000Z", "What does `make lint` run?")
    answer = _assistant(
        s,
        "b-2",
        "b-1",
        "2025-06-02T08:30:05.000Z",
        "msg_b1",
        {"type": "text", "text": "It runs ruff and mypy."},
        _usage(100, 8),
    )
    image = _user(
        s,
        "b-3",
        "b-2",
        "2025-06-02T08:31:00.000Z",
        [
            {"type": "image", "source": {"type": "base64", "data": "AAAA"}},
            {"type": "text", "text": "And this error?"},
        ],
    )
    records = [user, answer, image]
    for record in records:
        record.pop("gitBranch", None)
        record["cwd"] = "/srv/app"
    return [json.dumps(r) for r in records]


CHAT = [
    {"role": "system", "content": "You are a coding assistant."},
    {"role": "user", "content": "Rename foo to bar in utils.py"},
    {
        "role": "assistant",
        "content": "Renaming.",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "edit_file", "arguments": '{"path": "utils.py"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "name": "edit_file", "content": "ok"},
    {"role": "assistant", "content": "Done: foo is now bar."},
]


def write_sessions(folder: Path) -> Path:
    """The two Claude Code sessions and a plain chat in ``folder`` (returned)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{ALPHA_ID}.jsonl").write_text("\n".join(alpha_lines()) + "\n")
    (folder / f"{BETA_ID}.jsonl").write_text("\n".join(beta_lines()) + "\n")
    (folder / "chat.json").write_text(json.dumps(CHAT, indent=1))
    return folder
