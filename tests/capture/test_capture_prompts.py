"""What a user turn is: the user's words, a slash command and its expansion, a persona
prompt, plumbing; recognised by shape."""

from __future__ import annotations

import pytest

from wiki_memory.capture.prompts import (
    COMMAND,
    EXPANSION,
    META,
    PERSONA,
    USER,
    classify,
    classify_turns,
    is_meta_prompt,
    slash_command,
)

PERSONA_EN = """NEVER break character until given an exit command.
You are Winston, the Architect. You design systems and ALWAYS follow the workflow below.

## Activation
- Read the full file before doing anything
- Greet the user with your name and role
- STAY in character at all times
- Offer the numbered list of commands
- Wait for the user's choice

## Rules
- NEVER skip a step of the workflow
- You MUST ask before writing any file
"""

PERSONA_JA = """あなたはシニアエンジニアです。以下のルールに従ってください。
## ルール
- 必ず日本語で回答すること
- コードを書く前に計画を立てること
- テストを必ず実行すること
"""

# A user's own long request: laid out like a document, but a task, not who the agent is.
SPEC = """Add CSV export to the orders page.

## Requirements
- export all columns of the orders table
- use the existing serializer in src/serializers.py
- add a download button next to the filter
- write tests for the new endpoint
- keep the API backwards compatible

## Notes
The data lives in src/orders.py and the view in src/views.py; the frontend is in web/.
Please make sure you run the tests before you finish, and tell me what you changed.
"""

EXPANDED = """## Context

- Current git status: run `git status`
- Current branch: run `git branch --show-current`

## Your task

Based on the above changes, create a single git commit. You MUST NOT push.
- Stage only the files related to the change
- Write a message in the imperative mood
- NEVER add unrelated files
- Do not amend earlier commits
- Report the commit id
"""


@pytest.mark.parametrize("text", [PERSONA_EN, PERSONA_JA, "NEVER break character.\nYou are Bob, a pirate who codes."])
def test_a_persona_prompt_is_recognised_by_its_shape(text):
    assert classify(text).kind == PERSONA
    assert classify(text).words == ""


@pytest.mark.parametrize(
    "text",
    [
        SPEC,
        "You are right, fix the bug in app.py please.",
        "Toujours utiliser pnpm au lieu de npm dans ce dépôt.",
        "常にpnpmを使ってください。npmは使わないでください。",
        "Never use npm in this repo, always pnpm.",
    ],
)
def test_the_users_own_words_stay_the_users(text):
    kind = classify(text)
    assert kind.kind == USER and kind.words == text.strip()


def test_slash_commands_typed_or_recorded_keep_their_arguments_as_the_users_words():
    assert slash_command("/review check the auth module") == ("/review", "check the auth module")
    assert classify("/tasks") == classify("/tasks")  # frozen, comparable
    assert classify("/tasks").kind == COMMAND and classify("/tasks").command == "/tasks"
    assert classify("/review check auth").words == "check auth"
    # A path typed at the prompt is not a command.
    assert classify("/home/me/app.py fails on start").kind == USER
    record = (
        "<command-message>tasks is running…</command-message>\n<command-name>/tasks</command-name>\n"
        "<command-args>add login</command-args>"
    )
    assert classify(record).kind == COMMAND and classify(record).command == "/tasks"
    assert classify(record).words == "add login"
    assert is_meta_prompt(record)  # the transcript readers still skip the record itself


def test_the_turn_a_command_record_expands_into_is_its_expansion():
    record = "<command-name>/commit</command-name>\n<command-args></command-args>"
    # Written at the same instant as the record: the expansion, whatever its shape.
    kinds = classify_turns([record, "Commit the staged work", "Now fix the login test"], [0.0, 0.2, 90.0])
    assert [k.kind for k in kinds] == [COMMAND, EXPANSION, USER]
    assert kinds[1].command == "/commit"
    # No times known: an instruction document after the record is its expansion; a short turn is the user's.
    assert [k.kind for k in classify_turns([record, EXPANDED])] == [COMMAND, EXPANSION]
    builtin = "<command-name>/clear</command-name>\n<command-args></command-args>"
    assert [k.kind for k in classify_turns([builtin, "Fix the login test"], [0.0, 40.0])] == [COMMAND, USER]


def test_plumbing_is_meta():
    for text in ("<environment_context>cwd</environment_context>", "Caveat: The messages below were generated"):
        assert classify(text).kind == META


def test_a_notification_record_written_as_a_user_turn_is_plumbing():
    text = (
        "<task-notification>\n<task-id>b3932ee</task-id>\n<status>completed</status>\n"
        "<summary>Background command finished</summary>\n</task-notification>"
    )
    assert is_meta_prompt(text) and classify(text).kind == META
    assert classify("<div> is not closing here, why?").kind == USER


def test_a_turn_opening_with_a_machines_record_is_plumbing():
    # (The harness's words may follow the record: not the user's.)
    text = "<task-notification>\n<task-id>ac27727</task-id>\n</task-notification>\nRead the output file to retrieve it"
    assert classify(text).kind == META


def test_a_users_long_request_with_shouted_rules_is_still_the_users():
    text = (
        "Migrate the billing service to the new payments API.\n\n## Scope\n"
        "- Replace the client in src/billing/client.py\n- Keep the retry policy\n- Update the fixtures\n"
        "- Add a test for refunds\n- Document the change in docs/billing.md\n\n## Constraints\n"
        "You MUST keep the public functions as they are.\nYou must NEVER log card numbers anywhere.\n"
        "You should ONLY touch files under src/billing and tests/billing.\nTell me what you changed and why "
        "when you are done, and list anything you could not finish so that I can pick it up tomorrow.\n"
        "\n## Notes\nThe old client retries three times with a backoff; the new API has idempotency keys, "
        "so a retried refund is safe as long as the key is the same. The sandbox keys are in 1Password.\n"
    )
    assert classify(text).kind == USER


TEMPLATE = """## Request

```text
Tighten the retry policy of the payments client
```

Take the request above into account before anything else.

## Steps

1. Read the current policy and the incidents it caused.
2. Write the new limits into the configuration.
3. Update the tests that cover retries.
4. Run the whole suite and record the result.
5. Summarise what changed for the reviewers.
6. Stop and wait if any limit is ambiguous.

## Rules

- NEVER change the public interface of the client.
- Keep every step small and reviewable.
- Name each file you change in the summary, with one line on why it changed.
- Leave the feature flags as they are unless the request says otherwise.
"""


def test_a_prompt_template_expanded_before_recording_keeps_only_what_the_user_typed():
    kind = classify(TEMPLATE)
    assert kind.kind == EXPANSION and kind.words == "Tighten the retry policy of the payments client"
    # A short paste under a heading is the user's own turn.
    paste = "## Error\n\n```\nKeyError: 'SHOP_DB_URL'\n```\n\nWhy does the app fail to start?"
    assert classify(paste).kind == USER
