"""Preferences and decisions the user states in a prompt, written in the user's words.

A sentence counts when it opens with a statement of how things are done from now on
("always ...", "never ...", "from now on ...", "we use X, not Y", "let's go with X", "we
decided to ..."), and is refused when it is a question, a condition, a request that needs
the conversation to make sense ("never do that again"), part of a paste (code, logs, a long
spec), or says too little to be a rule ("always be careful"). A decision must name what it
chose (a tool, a library, a file, a `code` span).

In other languages the same structure is recognised: a modal word opening the sentence or
right after its verb ("toujours", "jamais", "désormais"; "immer", "nie", "ab jetzt";
"siempre", "nunca"; in Chinese and Japanese, words for always, every time, from now on:
"常に", "毎回", "今後"; "总是", "每次", "以后") makes a preference, a contrast ("au lieu
de", "statt", "en lugar de", "ではなく", "而不是") between something chosen and something
turned down makes a decision; either must name what it is about (a tool, a file). The page
keeps the user's words. Only the modal and contrast words are listed per language, nothing
about what the rule says.

What a decision chose (`names`) and what it turned down (`negated`: "not SQLite", "instead
of npm") let the memory layer see a reversal: a later decision that turns down what an
earlier one chose.
"""

from __future__ import annotations

import re

from wiki_memory.consolidate.distill.candidate import Candidate, proposed
from wiki_memory.consolidate.distill.evidence import Evidence
from wiki_memory.consolidate.oneline import cut_at_word

MAX_PROMPT_CHARS = 1500  # longer prompts are mostly pastes (specs, logs, files)

_LEAD = re.compile(
    r"^(?:(?:ok(?:ay)?|so|also|and|oh|btw|by the way|note|important|remember|remember that|one more thing|"
    r"actually|fyi|hey|well|please)\b[,:!.]?\s+)+",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"^(?:always|never|from now on|going forward|in (?:the )?future|(?:don['\u2019]?t|do not) ever|"
    r"(?:we|i) (?:always|never|prefer|(?:would|'d) rather|(?:don['\u2019]?t|do not) (?:ever )?"
    r"(?:use|want|allow|commit|push|merge|add|write|run))|(?:please )?prefer)\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"^(?:let'?s (?:go with|use|stick with|switch to|move to|standardi[sz]e on|keep using)|"
    r"(?:we|i)(?:'ll| will)? (?:go with|stick with|switch to|standardi[sz]e on)|"
    r"(?:we|i) (?:use|are using|'re using|will use|'ll use|now use|should use) .+?,? "
    r"(?:not|instead of|rather than|over) |"
    r"(?:we|i)(?:'ve| have)? decided|(?:the )?decision(?: is)?:|"
    r"(?:use|switch to) \S+ (?:instead of|rather than|not) )",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^(?:(?:can|could|would|should|will|shall|may|do|does|did|is|are|was|were)\s+(?:you|we|i|they|it|he|she|this|"
    r"that|there|the)\b|what|how|why|when|where|which|who)\b",
    re.IGNORECASE,
)
_CONDITION = re.compile(r"^(?:if|when|unless|once|whenever|in case)\b", re.IGNORECASE)
_NEEDS_CONTEXT = re.compile(
    r"\b(?:do|did|like|about|with|use|try) (?:that|this|it|these|those|them)\b|\b(?:that|this|it) again\b|"
    r"\bthe (?:above|same|former|latter)\b|\bas (?:above|before|I said)\b|"
    r"\b(?:mentioned|said) (?:above|earlier|before)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:not|instead of|rather than|no longer|over|switch(?:ing)? (?:away )?from|replac(?:e|ing)|drop(?:ping)?|"
    r"move away from|stop using|anymore)\s+(?:the |a |an |using )?([`'\"]?[\w.+#/-]+[`'\"]?)",
    re.IGNORECASE,
)
_VAGUE = set(
    """be careful good nice clean better best sure quickly properly correct correctly right things stuff everything
    anything something work code thing way make sure really very just""".split()
)
_STOP = set(
    """a an the and or but of to in on at for with by from as is are be been being it its this that these those
    we i you he she they our my your their us me them do does did not no yes so if then than too also just always
    never from now going forward future let lets let's use using go with please don't do dont will would should
    can could rather prefer instead over into onto any all each every when""".split()
)
_TECH = set(
    """python python3 pytest unittest tox nox ruff mypy pyright black isort flake8 pylint uv poetry pip pipenv conda
    hatch pdm node npm pnpm yarn bun deno typescript javascript eslint prettier jest vitest mocha playwright cypress
    webpack vite esbuild react vue svelte angular nextjs tailwind rust cargo clippy golang gofmt java kotlin
    gradle maven swift ruby rails rspec php composer docker compose podman kubernetes k8s helm terraform ansible aws gcp
    azure postgres postgresql sqlite mysql mariadb redis mongodb mongo kafka rabbitmq celery django flask fastapi
    sqlalchemy alembic graphql grpc rest json yaml toml markdown git github gitlab main master rebase squash merge
    tabs spaces utf-8 utc monorepo makefile make bash zsh fish linux macos windows ci cd tdd mocks mock fixtures
    logging logger print f-strings dataclasses pydantic asyncio threads""".split()
)
# Other languages: the few modal words that make a rule, at the start of a sentence or right
# after its verb (French and German put them there: "Utilise toujours", "Verwende immer").
_MODAL = re.compile(
    r"^(?:\S+\s+)?(?:toujours|jamais|désormais|dorénavant|à partir de maintenant|à l'avenir|"
    r"je préfère|nous préférons|on préfère|préfère[rz]?|"
    r"immer(?! noch)|niemals|nie|ab jetzt|von nun an|künftig|zukünftig|bevorzuge[n]?|"
    r"siempre|nunca|jamás|a partir de ahora|de ahora en adelante|prefiero|preferimos|"
    r"sempre|nunca|a partir de agora|prefiro|mai|d'ora in poi|preferisco)\b",
    re.IGNORECASE,
)
# (Words for "always", "from now on", "every time": not "must" or "don't", which one-off
# requests use as much as rules.)
_MODAL_CJK = re.compile(r"常に|絶対に|今後|これからは|以後|毎回|总是|始终|永远|以后|今后|从现在开始|一律|每次")
_CONTRAST = re.compile(
    r"\b(?:au lieu de|plutôt que|et non|pas)\s+|\b(?:statt|anstatt|nicht)\s+|\b(?:en lugar de|en vez de|no)\s+|"
    r"\b(?:em vez de|ao invés de|invece di|non)\s+|ではなく|じゃなくて?|而不是|不用|代替",
    re.IGNORECASE,
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_NAME = re.compile(r"`[^`]+`|\b[\w.+#-]*[A-Z][\w.+#-]*\b|\b[\w+#-]+(?:[./_][\w+#-]+)+\b|\b[A-Za-z]+\d[\w.-]*\b")


def _sentences(prompt: str) -> list[str]:
    """The prompt's sentences outside code fences, quotes and pasted lines."""
    text = re.sub(r"```.*?(```|$)", "\n", prompt, flags=re.DOTALL)
    out: list[str] = []
    for line in text.splitlines():
        raw = line.strip()
        if not raw or raw.startswith((">", "<", "$ ", "#!", "//", "    ")) or re.search(r"[{};]\s*$|=>|\)\s*\{", raw):
            continue
        raw = re.sub(r"^[-*•]\s+|^\d+[.)]\s+", "", raw)
        out.extend(s.strip() for s in re.split(r"(?<=[.!?])\s+(?=\S)|(?<=[\u3002\uff01\uff1f])", raw) if s.strip())
    return out


def names_of(text: str) -> list[str]:
    """What a sentence names: `code`, tools and libraries, CamelCase and dotted names, lowercased."""
    found: dict[str, None] = {}
    for m in _NAME.finditer(text):
        token = m.group(0).strip("`'\".,;:!?()")
        starts = m.start() == 0 or bool(re.search(r"(^|[.!?:]\s+|\n\s*)$", text[: m.start()]))
        if not token or (starts and not m.group(0).startswith("`") and token[1:].islower()):
            continue  # a capital that only starts a sentence
        if token.lower() in _STOP or token in ("I", "OK"):
            continue
        found.setdefault(token.lower(), None)
    for word in re.findall(r"[A-Za-z][\w.+#-]*", text):
        if word.lower() in _TECH:
            found.setdefault(word.lower(), None)
    return list(found)


def _negated(text: str) -> list[str]:
    out: list[str] = []
    for m in _NEGATION.finditer(text):
        token = m.group(1).strip("`'\".,;:!?()").lower()
        if token and token not in _STOP and token not in _VAGUE and token not in ("ever", "be") and token not in out:
            out.append(token)
    return out


def content_words(text: str) -> list[str]:
    words = (w.rstrip(".-") for w in re.findall(r"[a-z][a-z0-9_+#.-]*", text.lower()))
    return [w for w in words if w not in _STOP and len(w) > 1]


def _clean(sentence: str) -> str:
    sentence = _LEAD.sub("", sentence.strip()).strip()
    sentence = re.sub(r"^[\"'`]|[\"'`]$", "", sentence).strip()
    sentence = sentence.rstrip(" .!;:")
    return sentence[:1].upper() + sentence[1:] if sentence else sentence


def _names_any(text: str) -> list[str]:
    """What a sentence names, in any script: in Chinese or Japanese, the Latin words and `code`."""
    dotfiles = [w.lower() for w in re.findall(r"(?<![\w.])\.[A-Za-z][\w.-]*[\w]", text)]  # `.env`, `.nvmrc`
    if not _CJK.search(text):
        return list(dict.fromkeys(names_of(text) + dotfiles))
    found = re.findall(r"`[^`]+`|[A-Za-z][A-Za-z0-9_.+#/-]*[A-Za-z0-9_+#]|[A-Za-z]", text)
    return list(dict.fromkeys(w.strip("`").lower() for w in found if w.strip("`").lower() not in _STOP))


def foreign_choice(text: str) -> tuple[list[str], list[str]] | None:
    """(chosen, turned down) of a decision in another language, when it contrasts two named things."""
    contrast = _CONTRAST.search(text)
    if not contrast:
        return None
    # (What follows the contrast does not start a sentence: no capital to discount there.)
    before, after = _names_any(text[: contrast.start()]), _names_any("- " + text[contrast.end() :])
    if not before or not after:
        return None
    # Japanese puts what is turned down first ("npmではなくpnpm"); the others after the contrast.
    if re.match(r"ではなく|じゃなく", contrast.group(0)):
        return after, before
    return before, after


def _other_language(text: str) -> str | None:
    """`decision` | `preference` | None for a sentence in another language (see the module docstring)."""
    if foreign_choice(text) is not None:
        return "decision"
    if _MODAL.match(text) or _MODAL_CJK.search(text):
        return "preference"
    return None


def judge(sentence: str) -> tuple[str | None, str]:
    """(`preference` | `decision` | None, why) for one sentence of a prompt."""
    text = _clean(sentence)
    words = text.split()
    cjk = len(_CJK.findall(text))
    if "?" in sentence or "\uff1f" in sentence or _QUESTION_START.match(text):
        return None, "a question"
    if _CONDITION.match(text) or re.match(r"^(si|wenn|falls|cuando|quand|もし|如果)\b", text, re.IGNORECASE):
        return None, "a condition"
    if not (4 <= len(words) <= 30 or (6 <= cjk + len(names_of(text)) * 2 <= 80 and len(text) <= 160)):
        return None, "too short or too long for a rule"
    if re.match(r"^never ?mind\b", text, re.IGNORECASE):
        return None, "no statement of how things are done"
    kind = "decision" if _DECISION.match(text) else ("preference" if _PREFERENCE.match(text) else None)
    foreign = kind is None
    if foreign:
        kind = _other_language(text)
    if kind is None:
        return None, "no statement of how things are done"
    if foreign:
        # Words are not enough to judge a sentence in another language: it must name what it
        # is about (a tool, a file, a `code` span).
        if not _names_any(text):
            return None, "names nothing it is about"
        return kind, ""
    if _NEEDS_CONTEXT.search(text):
        return None, "needs the conversation to make sense"
    content = [w for w in content_words(text) if w not in _VAGUE]
    names = names_of(text)
    if kind == "decision" and not (set(names) - set(_negated(text))):
        return None, "a decision that names nothing it chose"
    if len(content) < 2 or (not names and len(content) < 3):
        return None, "says too little to be a rule"
    return kind, ""


def statements(evidence: Evidence) -> tuple[list[Candidate], list[str]]:
    """(candidates, sentences refused with why) from the user's prompts."""
    out: list[Candidate] = []
    refused: list[str] = []
    seen: set[str] = set()
    for prompt in evidence.prompts:
        if len(prompt.text) > MAX_PROMPT_CHARS or prompt.text.lstrip().startswith(("<", "[", "{")):
            continue
        sentences = _sentences(prompt.text)
        for i, sentence in enumerate(sentences):
            kind, why = judge(sentence)
            if kind is None:
                if why not in ("no statement of how things are done", "too short or too long for a rule"):
                    refused.append(f"{sentence[:100]!r}: {why}")
                continue
            statement = _clean(sentence)
            key = " ".join(content_words(statement))
            if key in seen:
                continue
            seen.add(key)
            names, negated = names_of(statement), _negated(statement)
            choice = foreign_choice(statement) if kind == "decision" and not _DECISION.match(statement) else None
            if choice is not None:
                names, negated = choice[0] + [n for n in choice[1] if n not in choice[0]], choice[1]
            date = prompt.time[:10] if len(prompt.time) >= 10 else evidence.date
            out.append(
                proposed(
                    evidence,
                    kind,
                    title=cut_at_word(statement, 120),
                    key=key,
                    date=date,
                    facts={
                        "statement": statement,
                        "names": [n for n in names if n not in negated],
                        "negated": negated,
                        # A rule that names nothing keeps the sentence it answered, in the user's
                        # words ("how do we make 1Password ask for my YubiKey? I don't want ...").
                        **({"context": _clean(sentences[i - 1])[:240]} if i and not names else {}),
                    },
                    reason=f"stated by the user in {evidence.source}",
                    tags=("distilled", "stated"),
                )
            )
    return out, refused
