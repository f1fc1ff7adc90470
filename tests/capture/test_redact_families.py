"""The redaction package registers every rule it holds: each finder of each family module
runs from the engine, and the public `redact` reaches each module."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import wiki_memory.capture.redact as package
from wiki_memory.capture.redact import FAMILIES, find, redact


def where(finder) -> tuple[str, str]:
    """(module, name) of a registered finder: a function, or one whose module loads on first use."""
    return getattr(finder, "module", None) or finder.__module__, finder.__name__


def package_finders() -> dict[str, object]:
    """Every finder defined in the package's modules: a function named `..._spans` that takes
    the text alone (the helpers that take a position or a pattern too are not rules)."""
    finders: dict[str, object] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for name, fn in inspect.getmembers(module, inspect.isfunction):
            own = fn.__module__ == module.__name__ and name.endswith("_spans")
            if own and list(inspect.signature(fn).parameters) == ["text"]:
                finders[f"{info.name}.{name}"] = fn
    return finders


def test_every_finder_in_the_package_is_registered_with_the_engine():
    registered = {where(family.finder) for family in FAMILIES if family.finder is not None}
    finders = package_finders()
    assert len(finders) >= 19
    missing = sorted(name for name, fn in finders.items() if where(fn) not in registered)
    assert missing == []
    # and every registered finder names a function of the package
    for module, name in registered:
        assert module.startswith(package.__name__ + ".")
        assert callable(getattr(importlib.import_module(module), name))


# Texts for each family module, with the secret in each that the module's own finders catch.
EXAMPLES = {
    "private_keys": (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7b9xQz3LmP2\n-----END RSA PRIVATE KEY-----\n",
        "MIIEowIBAAKCAQEA7b9xQz3LmP2",
    ),
    "vendors": ("export GH=ghp_Zq8mV2xL7pK4Rt9Wn3Bc6Hj1Df5Gs0Ay2Ue7I", "ghp_Zq8mV2xL7pK4Rt9Wn3Bc6Hj1Df5Gs0Ay2Ue7I"),
    "token_shapes": (
        "bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0 sends",
        "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0",
    ),
    "http_credentials": (
        "postgres://app:Xk9pLm2Qr7@db.example.com/app\n"
        "the log shows Bearer abcDEF123ghiJKL456mnoPQR\n"
        'requests.get(url, cookies={"sessionid": "a8F3kL0pQz9X"})',
        "Xk9pLm2Qr7",
        "abcDEF123ghiJKL456mnoPQR",
        "a8F3kL0pQz9X",
    ),
    "assignments": ("DB_PASSWORD=Xk9pLm2Qr7zz\n", "Xk9pLm2Qr7zz"),
    "directives": ("requirepass Xk9pLm2Qr7zz\n", "Xk9pLm2Qr7zz"),
    "markup": ("<password>Xk9pLm2Qr7zz</password>", "Xk9pLm2Qr7zz"),
    "code_pairs": ('os.Setenv("API_KEY", "Xk9pLm2Qr7zzW4")', "Xk9pLm2Qr7zzW4"),
    "command_lines": ("docker login -u me -p Xk9pLm2Qr7zz registry.example.com", "Xk9pLm2Qr7zz"),
    "prose": ("the password is Xk9pLm2Qr7zz!", "Xk9pLm2Qr7zz"),
}


def test_every_family_module_has_an_example():
    modules = {name.split(".")[0] for name in package_finders()}
    assert modules == set(EXAMPLES)


@pytest.mark.parametrize("module", sorted(EXAMPLES))
def test_redact_reaches_each_family_module(module):
    text, *secrets = EXAMPLES[module]
    own = [f for f in FAMILIES if f.finder is not None and where(f.finder)[0].endswith("." + module)]
    assert own, module
    for secret in secrets:
        start = text.index(secret)
        # the module's own rules find the secret ...
        assert any(s <= start and start + len(secret) <= e for f in own for s, e, _ in f.spans(text))
        # ... and the package's API, through the engine, takes it out
        assert any(f.start <= start < f.end for f in find(text))
        assert secret not in redact(text)
