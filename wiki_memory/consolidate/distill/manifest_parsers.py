"""What a manifest or config file states, by its kind: one parser per format (`package.json`,
`pyproject.toml`, `Cargo.toml`, `go.mod`, a Makefile, a compose file, a Dockerfile, a
workflow, a git hook, a version file ...), each reading the topics of `manifests.TOPICS` from
what is whole of the recorded text. Only what the file says, in its own words.
"""

from __future__ import annotations

import configparser
import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from wiki_memory.consolidate.distill.doc_parsers import Topics, pytest_ini, pytest_options, readme, tox_ini

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

MAX_ITEMS = 12

# A Read tool's line numbers (`     1→`, `1\t`) and the capture's cut marker.
_LINE_NO = re.compile(r"^\s*\d+(→|\t)", re.M)
_CUT = re.compile(r"^\[\.\.\. [\d,]+ (characters omitted|more characters cut) \.\.\.\]$", re.M)


def _clean(text: str) -> str:
    return _LINE_NO.sub("", text or "")


def _whole(text: str) -> tuple[str, bool]:
    """(the text before any cut, whether it is the whole file)."""
    cut = _CUT.search(text)
    return (text[: cut.start()], False) if cut else (text, True)


def _items(pairs: Mapping[str, Any], limit: int = MAX_ITEMS) -> str:
    shown = [f"{k} {v}".strip() if isinstance(v, str) else str(k) for k, v in list(pairs.items())[:limit]]
    more = len(pairs) - limit
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _ports_in(text: str) -> list[str]:
    """Ports a command names (`--port 3001`, `-p 8000`, `PORT=5173`, `:8080`)."""
    found = re.findall(r"(?:--port[= ]|-p |PORT=|localhost:|0\.0\.0\.0:|127\.0\.0\.1:)(\d{2,5})\b", text)
    return list(dict.fromkeys(found))


def _json_sections(text: str) -> dict[str, Any]:
    """A JSON object, or what can be read of a cut one: its top-level strings and the flat
    objects whose closing brace survived."""
    try:
        data = json.loads(re.sub(r",(\s*[}\]])", r"\1", re.sub(r"^\s*//.*$", "", text, flags=re.M)))
        return data if isinstance(data, dict) else {}
    except ValueError:
        pass
    out: dict[str, Any] = {}
    # (An object the cut went through is read up to the cut: its whole lines are whole.)
    for m in re.finditer(r'^\s{0,4}"([\w@/.-]+)"\s*:\s*\{([^{}]*)(?:\}|\Z)', text, re.M):
        pairs = dict(re.findall(r'"([^"]+)"\s*:\s*"([^"]*)"', m.group(2)))
        if pairs:
            out[m.group(1)] = pairs
    for m in re.finditer(r'^\s{0,4}"([\w-]+)"\s*:\s*"([^"]*)"', text, re.M):
        out.setdefault(m.group(1), m.group(2))
    return out


def _package_json(text: str) -> Topics:
    data = _json_sections(text)
    runner = str(data.get("packageManager") or "npm").split("@")[0]
    stack: list[str] = []
    if isinstance(data.get("name"), str):
        stack.append(
            f"Package {data['name']}" + (f" {data['version']}" if isinstance(data.get("version"), str) else "")
        )
    engines = data.get("engines")
    if isinstance(engines, dict) and engines:
        stack.append("Engines: " + _items(engines))
    if isinstance(data.get("packageManager"), str):
        stack.append(f"Package manager: {data['packageManager']}")
    if data.get("type") == "module":
        stack.append('ES modules (`"type": "module"`)')
    for key, label in (("dependencies", "Dependencies"), ("devDependencies", "Dev dependencies")):
        deps = data.get(key)
        if isinstance(deps, dict) and deps:
            stack.append(f"{label}: {_items(deps)}")
    scripts = data.get("scripts")
    lines, ports = [], []
    if isinstance(scripts, dict):
        for name, command in list(scripts.items())[:MAX_ITEMS]:
            lines.append(f"`{runner} run {name}`: `{command}`")
            ports += [f"{p} (script `{name}`)" for p in _ports_in(str(command))]
    return {"stack": stack, "scripts": lines, "ports": ports}


def _table(data: Any, key: str) -> dict[str, Any]:
    """`data[key]` when it is a table, else an empty one."""
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _toml(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        # Cut in the middle: the tables before the cut still read.
        lines = text.splitlines()
        for end in range(len(lines), 0, -1):
            if lines[end - 1].startswith("["):
                try:
                    return tomllib.loads("\n".join(lines[: end - 1]))
                except (tomllib.TOMLDecodeError, ValueError):
                    continue
        return {}


def _deps_list(items: Any) -> str:
    names = [str(d) for d in items if isinstance(d, str)] if isinstance(items, list) else []
    shown = ", ".join(names[:MAX_ITEMS])
    return shown + (f" and {len(names) - MAX_ITEMS} more" if len(names) > MAX_ITEMS else "")


def _pyproject(text: str) -> Topics:
    data = _toml(text)
    project, tool = _table(data, "project"), _table(data, "tool")
    poetry = _table(tool, "poetry")
    stack: list[str] = []
    name = project.get("name") or poetry.get("name")
    if name:
        version = project.get("version") or poetry.get("version")
        stack.append(f"Package {name}" + (f" {version}" if isinstance(version, str) else ""))
    if project.get("requires-python"):
        stack.append(f"Python {project['requires-python']} (requires-python)")
    poetry_deps = _table(poetry, "dependencies")
    if isinstance(poetry_deps.get("python"), str):
        stack.append(f"Python {poetry_deps['python']} (poetry)")
    if project.get("dependencies"):
        stack.append("Dependencies: " + _deps_list(project["dependencies"]))
    elif poetry_deps:
        stack.append("Dependencies: " + _items({k: v for k, v in poetry_deps.items() if k != "python"}))
    backend = (
        (data.get("build-system") or {}).get("build-backend") if isinstance(data.get("build-system"), dict) else ""
    )
    if backend:
        stack.append(f"Build backend: {backend}")
    tools = sorted(k for k in tool if k != "poetry")
    if tools:
        stack.append("Configured tools: " + ", ".join(tools[:MAX_ITEMS]))
    scripts = project.get("scripts") or poetry.get("scripts") or {}
    lines = [f"`{k}` runs `{v}`" for k, v in list(scripts.items())[:MAX_ITEMS]] if isinstance(scripts, dict) else []
    return {
        "stack": stack,
        "scripts": lines,
        "ports": [],
        "tests": pytest_options(_table(_table(tool, "pytest"), "ini_options")),
    }


def _setup_cfg(text: str) -> Topics:
    parser = configparser.ConfigParser()
    try:
        parser.read_string(text)
    except configparser.Error:
        return {}
    stack: list[str] = []
    if parser.has_option("metadata", "name"):
        stack.append(f"Package {parser.get('metadata', 'name')}")
    if parser.has_option("options", "python_requires"):
        stack.append(f"Python {parser.get('options', 'python_requires')} (python_requires)")
    if parser.has_option("options", "install_requires"):
        deps = [d.strip() for d in parser.get("options", "install_requires").splitlines() if d.strip()]
        stack.append("Dependencies: " + _deps_list(deps))
    scripts: list[str] = []
    if parser.has_option("options.entry_points", "console_scripts"):
        for line in parser.get("options.entry_points", "console_scripts").splitlines():
            if "=" in line:
                name, target = (p.strip() for p in line.split("=", 1))
                scripts.append(f"`{name}` runs `{target}`")
    tests = pytest_options(dict(parser["tool:pytest"])) if parser.has_section("tool:pytest") else []
    return {"stack": stack, "scripts": scripts[:MAX_ITEMS], "ports": [], "tests": tests}


def _cargo(text: str) -> Topics:
    data = _toml(text)
    package = _table(data, "package")
    stack: list[str] = []
    if package.get("name"):
        stack.append(
            f"Crate {package['name']}" + (f" {package['version']}" if isinstance(package.get("version"), str) else "")
        )
    for key, label in (("edition", "Rust edition"), ("rust-version", "Minimum Rust")):
        if isinstance(package.get(key), str):
            stack.append(f"{label} {package[key]}")
    deps = data.get("dependencies")
    if isinstance(deps, dict) and deps:
        stack.append(
            "Dependencies: "
            + _items({k: v if isinstance(v, str) else (v.get("version") or "") for k, v in deps.items()})
        )
    members = _table(data, "workspace").get("members")
    if isinstance(members, list) and members:
        stack.append("Workspace members: " + ", ".join(str(m) for m in members[:MAX_ITEMS]))
    bins = [b.get("name") for b in data.get("bin") or [] if isinstance(b, dict) and b.get("name")]
    scripts = [f"binary `{b}`: `cargo run --bin {b}`" for b in bins[:MAX_ITEMS]]
    return {"stack": stack, "scripts": scripts, "ports": []}


def _go_mod(text: str) -> Topics:
    stack: list[str] = []
    if m := re.search(r"^module\s+(\S+)", text, re.M):
        stack.append(f"Go module {m.group(1)}")
    if m := re.search(r"^go\s+(\d[\w.]*)", text, re.M):
        stack.append(f"Go {m.group(1)}")
    if m := re.search(r"^toolchain\s+(\S+)", text, re.M):
        stack.append(f"Toolchain {m.group(1)}")
    direct = re.findall(r"^\s*([\w.-]+\.[\w./-]+)\s+(v[\w.+-]+)\s*$", text, re.M)
    if direct:
        stack.append("Requires: " + _items(dict(direct)))
    return {"stack": stack, "scripts": [], "ports": []}


def _targets(text: str, runner: str) -> Topics:
    """A Makefile's or justfile's targets: `name:` at the start of a line, no variables."""
    targets: list[str] = []
    for m in re.finditer(r"^([A-Za-z0-9][\w.-]*)(?:\s+[\w-]+)*\s*:(?!=)", text, re.M):
        name = m.group(1)
        if name not in targets and not name.startswith(".") and name.upper() != name:
            targets.append(name)
    lines = [f"`{runner} {t}`" for t in targets[:20]]
    if len(targets) > 20:
        lines.append(f"and {len(targets) - 20} more targets")
    ports = (
        [f"{p} (Makefile)" for p in _ports_in(text)]
        if runner == "make"
        else [f"{p} (justfile)" for p in _ports_in(text)]
    )
    return {"stack": [], "scripts": lines, "ports": ports}


def _compose(text: str) -> Topics:
    try:
        # Every value as written: YAML 1.1 would read an unquoted `2222:22` as a number.
        data = yaml.load(text, Loader=yaml.BaseLoader)  # (BaseLoader builds only strings, lists, maps)
    except yaml.YAMLError:
        data = None
    services = data.get("services") if isinstance(data, dict) else None
    stack: list[str] = []
    ports: list[str] = []
    if isinstance(services, dict):
        for name, service in list(services.items())[:MAX_ITEMS]:
            if not isinstance(service, dict):
                continue
            what = service.get("image") or (
                "built from " + str(service["build"]) if isinstance(service.get("build"), str) else "built here"
            )
            stack.append(f"Service `{name}`: {what}")
            for port in service.get("ports") or []:
                ports.append(f"{port} (service `{name}`, host:container)")
    return {"stack": stack, "scripts": [], "ports": ports}


def _dockerfile(text: str) -> Topics:
    stack = [f"Base image {m}" for m in re.findall(r"^FROM\s+(?:--\S+\s+)?(\S+)", text, re.M | re.I)]
    ports = [f"{p} (EXPOSE)" for line in re.findall(r"^EXPOSE\s+(.+)$", text, re.M | re.I) for p in line.split()]
    scripts = [f"{k.upper()} {v.strip()}" for k, v in re.findall(r"^(CMD|ENTRYPOINT)\s+(.+)$", text, re.M | re.I)]
    return {"stack": stack[:MAX_ITEMS], "scripts": scripts[-2:], "ports": ports}


def _version_file(label: str) -> Callable[[str], Topics]:
    def parse(text: str) -> Topics:
        lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
        if label == "tools":
            return {"stack": [f"{line.split()[0]} {' '.join(line.split()[1:])}" for line in lines[:MAX_ITEMS]]}
        return {"stack": [f"{label} {lines[0]}"]} if lines and len(lines[0]) <= 40 else {}

    return parse


def _tsconfig(text: str) -> Topics:
    data = _json_sections(text)
    options = data.get("compilerOptions")
    if not isinstance(options, dict):
        return {}
    keys = ("target", "module", "moduleResolution", "strict", "jsx", "baseUrl", "outDir")
    shown = {k: str(options[k]).lower() if isinstance(options[k], bool) else options[k] for k in keys if k in options}
    return (
        {"stack": [f"TypeScript compilerOptions: {', '.join(f'{k} {v}' for k, v in shown.items())}"]} if shown else {}
    )


def _requirements(text: str) -> Topics:
    deps = [line.split("#")[0].strip() for line in text.splitlines()]
    deps = [d for d in deps if d and not d.startswith("-")]
    return {"stack": ["Requirements: " + _deps_list(deps)]} if deps else {}


def _csproj(text: str) -> Topics:
    stack: list[str] = []
    if m := re.search(r"<TargetFrameworks?>([^<]+)</TargetFrameworks?>", text):
        stack.append(f"Target framework {m.group(1)}")
    if m := re.search(r"<OutputType>([^<]+)</OutputType>", text):
        stack.append(f"Output type {m.group(1)}")
    refs = re.findall(r'<PackageReference\s+Include="([^"]+)"(?:\s+Version="([^"]+)")?', text)
    if refs:
        stack.append("Packages: " + _items(dict(refs)))
    return {"stack": stack}


def _msbuild_props(text: str) -> Topics:
    """`Directory.Build.props`/`.targets`: the properties every project of the tree gets."""
    groups = re.findall(r"<PropertyGroup\b[^>]*>(.*?)(?:</PropertyGroup>|\Z)", text, re.S)
    props = {k: v.strip() for g in groups for k, v in re.findall(r"<(\w+)(?:\s[^>]*)?>([^<]*)</\1>", g)}
    return {"stack": ["Properties of every project: " + _items(props)]} if props else {}


# Shell words that only steer a hook script (not a program it runs).
_SHELL_WORDS = set(
    """if elif else fi then do done for while until case esac echo printf exit set return export local read shift
    test [ [[ command cd source . true false trap unset function declare readonly exec eval wait : break continue
    printenv type which""".split()
)


def _hook(text: str) -> Topics:
    """A git hook script (`.git/hooks/pre-commit`, `.husky/pre-push`): the programs it runs."""
    runs: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "}", "{", ")")) or "$(" in line.split("=", 1)[0]:
            continue
        line = re.sub(r"^(?:(?:if|elif|while|until|then|else|do|!|exec)\s+)+", "", line)
        line = re.split(r";\s*(?:then|do)\b|\s*;\s*$", line)[0].strip()
        words = line.split()
        if not words or words[0] in _SHELL_WORDS or re.match(r"^[A-Za-z_]\w*=", words[0]):
            continue
        if re.match(r"^[\w./-]+$", words[0]) and line not in runs:
            runs.append(line)
    return {"scripts": [f"runs `{r}`" for r in runs[:6]]} if runs else {}


def _workflow(text: str) -> Topics:
    """A GitHub Actions workflow: when it runs (its triggers) and the commands its steps run."""
    try:
        data = yaml.load(text, Loader=yaml.BaseLoader)
    except yaml.YAMLError:
        return {}
    if not isinstance(data, dict):
        return {}
    stack: list[str] = []
    on = data.get("on") if "on" in data else data.get("true")  # (`on:` is a boolean to YAML 1.1 readers)
    triggers: list[str] = []
    if isinstance(on, str):
        triggers = [on]
    elif isinstance(on, list):
        triggers = [str(t) for t in on]
    elif isinstance(on, dict):
        for event, spec in on.items():
            parts = []
            if isinstance(spec, dict):
                for key in ("branches", "tags", "paths"):
                    value = spec.get(key)
                    if value:
                        parts.append(f"{key} {', '.join(value) if isinstance(value, list) else value}")
                if isinstance(spec.get("schedule"), list):
                    parts.append("schedule")
            elif isinstance(spec, list) and event == "schedule":
                parts = [str(c.get("cron")) for c in spec if isinstance(c, dict) and c.get("cron")]
            triggers.append(event + (f" ({'; '.join(parts)})" if parts else ""))
    name = data.get("name")
    if triggers:
        stack.append((f'Workflow "{name}" runs on ' if isinstance(name, str) else "Runs on ") + ", ".join(triggers))
    runs: list[str] = []
    jobs = data.get("jobs")
    for job in jobs.values() if isinstance(jobs, dict) else []:
        if not isinstance(job, dict):
            continue
        for step in job.get("steps") or []:
            if not isinstance(step, dict):
                continue
            if isinstance(step.get("run"), str):
                first = next((x.strip() for x in step["run"].splitlines() if x.strip()), "")
                if first and first.split()[0] not in _SHELL_WORDS and f"`{first}`" not in runs:
                    runs.append(f"`{first}`")
            with_ = step.get("with")
            if isinstance(step.get("uses"), str) and isinstance(with_, dict):
                versions = {k: v for k, v in with_.items() if k.endswith("-version") and isinstance(v, str)}
                if versions:
                    stack.append(f"{step['uses'].split('@')[0]}: " + _items(versions))
    return {"stack": stack[:MAX_ITEMS], "scripts": [f"step runs {r}" for r in runs[:MAX_ITEMS]]}


_LICENCE = re.compile(r"licen[cs]e|\bcc0\b|creative commons|unlicense|public domain", re.I)


def _licence(text: str) -> Topics:
    """A LICENSE file: its name as its first lines give it (`MIT License`, `CC0 1.0 Universal`)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()][:4]
    named = [line for line in lines if len(line) <= 80 and not line.lower().startswith("copyright")]
    head = [line for line in named[:2] if _LICENCE.search(line) or re.search(r"\d", line)]
    return {"stack": ["Licence: " + " — ".join(head)]} if head and any(_LICENCE.search(h) for h in head) else {}


def _global_json(text: str) -> Topics:
    sdk = _json_sections(text).get("sdk")
    return {"stack": [f".NET SDK {sdk['version']}"]} if isinstance(sdk, dict) and sdk.get("version") else {}


PARSERS: dict[str, Callable[[str], Topics]] = {
    "package.json": _package_json,
    "pyproject.toml": _pyproject,
    "setup.cfg": _setup_cfg,
    "cargo.toml": _cargo,
    "go.mod": _go_mod,
    "makefile": lambda t: _targets(t, "make"),
    "gnumakefile": lambda t: _targets(t, "make"),
    "justfile": lambda t: _targets(t, "just"),
    "docker-compose.yml": _compose,
    "docker-compose.yaml": _compose,
    "compose.yml": _compose,
    "compose.yaml": _compose,
    "dockerfile": _dockerfile,
    ".nvmrc": _version_file("Node"),
    ".node-version": _version_file("Node"),
    ".python-version": _version_file("Python"),
    ".ruby-version": _version_file("Ruby"),
    ".tool-versions": _version_file("tools"),
    "rust-toolchain": _version_file("Rust toolchain"),
    "tsconfig.json": _tsconfig,
    "requirements.txt": _requirements,
    "global.json": _global_json,
    "pytest.ini": pytest_ini,
    "tox.ini": tox_ini,
}


def parser_for(path: str) -> Callable[[str], Topics] | None:
    name = os.path.basename(path).lower()
    if name.endswith((".csproj", ".fsproj", ".vbproj")):
        return _csproj
    if name.startswith("dockerfile"):
        return _dockerfile
    if name in ("directory.build.props", "directory.build.targets"):
        return _msbuild_props
    if name in ("license", "license.md", "license.txt", "licence", "licence.md", "copying"):
        return _licence
    if name in ("readme.md", "readme", "readme.rst", "readme.txt") and "/" not in path.replace("\\", "/"):
        return readme  # the project's own README, not a package's or a folder's
    folder = path.replace("\\", "/").lower()
    if re.search(r"(^|/)\.github/workflows/[^/]+\.ya?ml$", folder):
        return _workflow
    if re.search(r"(^|/)(\.git/hooks|\.husky)/[\w-]+$", folder) and not name.endswith(".sample"):
        return _hook
    return PARSERS.get(name)


def parse(path: str, text: str) -> Topics:
    """The topics a manifest's text states (see the module docstring); {} when none."""
    reader = parser_for(path)
    if reader is None:
        return {}
    body, _whole_file = _whole(_clean(text))
    try:
        topics = reader(body)
    except (ValueError, TypeError, AttributeError, KeyError):
        return {}  # a file that does not read as its kind: nothing stated
    return {k: [line for line in v if line] for k, v in topics.items() if v}
