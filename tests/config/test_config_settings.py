"""`config.toml` read once into typed sections (`wiki_memory.config.settings`): a bad value
is its default plus one line naming the file and the key; a part that cannot go on raises it."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from journals import set_config

from wiki_memory.cli import main
from wiki_memory.config import load_settings
from wiki_memory.config.settings import SECTIONS, Settings
from wiki_memory.consolidate.distill.llm import distill_config
from wiki_memory.consolidate.llm import llm_config
from wiki_memory.errors import WikiMemoryError


def test_a_file_is_read_into_its_sections_with_their_types():
    set_config(
        '[sync]\nauto = "yes"\nhost = "laptop"\n\n[trust]\npaths = "~/src"\n\n'
        '[consolidate]\nsettle_seconds = 2\n\n[index]\nthreads = "2"\n'
    )
    settings = load_settings()
    assert settings.sync.auto is True and settings.sync.host == "laptop" and settings.sync.remote == ""
    assert settings.trust.paths == ("~/src",)
    assert settings.consolidate.settle_seconds == 2.0 and isinstance(settings.consolidate.settle_seconds, float)
    assert settings.index.threads == 2 and settings.index.model == "sentence-transformers/all-MiniLM-L6-v2"
    assert settings.problems == []
    with pytest.raises(AttributeError, match="read-only"):
        settings.sync.auto = False


def test_a_bad_value_is_its_default_and_one_line_naming_the_file_and_the_key():
    set_config('[search]\nrerank_top = "many"\n\n[distill]\nbudget = 12.5\nbugdet = 1\n')
    settings = load_settings()
    path = str(settings.path)
    assert settings.search.rerank_top == 20 and settings.distill.budget == 6000
    assert settings.problems == [
        f"{path}: [distill] budget = 12.5 is not a whole number; using 6000",
        f"{path}: [distill] has no setting 'bugdet' (known: enabled, llm, budget, timeout, model, program)",
        f"{path}: [search] rerank_top = 'many' is not a whole number; using 20",
    ]
    assert all("\n" not in line for line in settings.problems)


def test_a_part_that_cannot_go_on_with_a_default_raises_the_line():
    settings = Settings({"consolidate": {"provider": "openai", "model": "m", "timeout": "soon"}})
    with pytest.raises(WikiMemoryError, match=r"^config.toml: \[consolidate\] timeout = 'soon' is not a number$"):
        llm_config(settings)
    settings = Settings({"distill": {"llm": "api", "budget": [1]}})
    with pytest.raises(WikiMemoryError, match=r"\[distill\] budget = \[1\] is not a whole number"):
        distill_config(settings)
    # A misspelt key is told, not fatal: the part goes on with what it knows.
    assert llm_config(Settings({"consolidate": {"provider": "openai", "model": "m", "modle": "x"}})) is not None


def test_a_section_that_is_not_a_table_is_its_defaults():
    settings = Settings({"sync": "auto"})
    assert settings.sync.auto is False
    assert settings.problems == ["config.toml: [sync] is not a table; using its defaults"]


def test_every_section_has_a_name_and_typed_defaults():
    for cls in SECTIONS:
        assert cls.name and cls.fields(), cls
        record = cls()
        for key, kind in cls.fields().items():
            default = getattr(record, key)
            assert default is None if kind.endswith("| None") else default is not None, (cls.name, key)


def test_doctor_names_the_bad_setting():
    set_config("[pages]\nlarge_kb = false\n")
    result = CliRunner().invoke(main, ["doctor"])
    assert "warn wiki-memory  config.toml" in result.output
    assert "[pages] large_kb = False is not a number" in result.output
