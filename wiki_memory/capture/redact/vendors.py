"""Vendor-prefixed tokens: the prefixes of gitleaks' rule set (config/gitleaks.toml) and of
GitHub's secret scanning partners, each with its body's characters and length.
"""

from __future__ import annotations

from wiki_memory.capture.redact.vocabulary import _classes, _is_placeholder, _regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from wiki_memory.capture.redact.engine import Span


# Character sets of token bodies. A literal `-` is escaped: a set is extended by appending
# characters (`_ANUD + "="`), and a bare `-` before them would make a range (`_-=`).
_AN = "A-Za-z0-9"
_ANU = "A-Za-z0-9_"
_ANUD = "A-Za-z0-9_\\-"
_ANUDD = "A-Za-z0-9_.\\-"
_HEX = "0-9a-fA-F"
_UD = "A-Z0-9"
_B64 = "A-Za-z0-9+/="
_B64U = "A-Za-z0-9_=\\-"
_PATH = "A-Za-z0-9/_\\-"

# (family, prefix, body characters, shortest body, longest body). Sources: gitleaks
# config/gitleaks.toml (2026-07) and GitHub's secret scanning patterns; fakes of each are in
# tests/fixtures/secrets/.
_VENDORS: tuple[tuple[str, str, str, int, int], ...] = (
    ("aws-access-key", "AKIA", _UD, 16, 16),
    ("aws-access-key", "ASIA", _UD, 16, 16),
    ("aws-access-key", "ABIA", _UD, 16, 16),
    ("aws-access-key", "ACCA", _UD, 16, 16),
    ("aws-bedrock-key", "ABSK", _B64, 100, 300),
    ("github-token", "ghp_", _AN, 30, 255),
    ("github-token", "gho_", _AN, 30, 255),
    ("github-token", "ghu_", _AN, 30, 255),
    ("github-token", "ghs_", _AN, 30, 255),
    ("github-token", "ghr_", _AN, 30, 255),
    ("github-token", "github_pat_", _ANU, 22, 255),
    ("gitlab-token", "glpat-", _ANUDD, 20, 300),
    ("gitlab-token", "gldt-", _ANUD, 20, 100),
    ("gitlab-token", "glrt-", _ANUDD, 20, 300),
    ("gitlab-token", "glptt-", _ANUD, 20, 100),
    ("gitlab-token", "glft-", _ANUD, 20, 100),
    ("gitlab-token", "glsoat-", _ANUD, 20, 100),
    ("gitlab-token", "glcbt-", _ANUD, 20, 100),
    ("gitlab-token", "glimt-", _ANUD, 20, 100),
    ("gitlab-token", "glagent-", _ANUD, 40, 100),
    ("gitlab-token", "gloas-", _ANUD, 40, 100),
    ("gitlab-token", "glffct-", _ANUD, 20, 100),
    ("gitlab-token", "GR1348941", _ANUD, 20, 100),
    ("npm-token", "npm_", _AN, 36, 36),
    ("pypi-token", "pypi-AgEIcHlwaS5vcmc", _ANUD, 50, 1000),
    ("pypi-token", "pypi-AgENdGVzdC5weXBpLm9yZw", _ANUD, 50, 1000),
    ("slack-token", "xoxb-", _ANUD, 10, 255),
    ("slack-token", "xoxp-", _ANUD, 10, 255),
    ("slack-token", "xoxa-", _ANUD, 10, 255),
    ("slack-token", "xoxo-", _ANUD, 10, 255),
    ("slack-token", "xoxs-", _ANUD, 10, 255),
    ("slack-token", "xoxr-", _ANUD, 10, 255),
    ("slack-token", "xoxe-", _ANUD, 10, 255),
    ("slack-token", "xoxe.xox", _ANUD, 10, 255),
    ("slack-token", "xapp-", _ANUD, 10, 255),
    ("slack-token", "hooks.slack.com/services/", _PATH, 20, 255),
    ("slack-token", "hooks.slack.com/workflows/", _PATH, 20, 255),
    ("slack-token", "hooks.slack.com/triggers/", _PATH, 20, 255),
    ("discord-webhook", "discord.com/api/webhooks/", _PATH, 40, 255),
    ("discord-webhook", "discordapp.com/api/webhooks/", _PATH, 40, 255),
    ("teams-webhook", ".webhook.office.com/webhookb2/", _PATH + "@", 60, 400),
    ("stripe-key", "sk_live_", _AN, 16, 255),
    ("stripe-key", "sk_test_", _AN, 16, 255),
    ("stripe-key", "sk_prod_", _AN, 16, 255),
    ("stripe-key", "rk_live_", _AN, 16, 255),
    ("stripe-key", "rk_test_", _AN, 16, 255),
    ("stripe-key", "rk_prod_", _AN, 16, 255),
    ("stripe-key", "whsec_", _AN, 24, 255),
    ("anthropic-key", "sk-ant-", _ANUD, 30, 300),
    ("openai-key", "sk-proj-", _ANUD, 20, 300),
    ("openai-key", "sk-svcacct-", _ANUD, 20, 300),
    ("openai-key", "sk-admin-", _ANUD, 20, 300),
    ("openai-key", "sk-None-", _ANUD, 20, 300),
    ("openai-key", "sk-", _ANUD, 20, 300),  # OpenAI's older keys, DeepSeek, OpenRouter, Moonshot ...
    ("google-api-key", "AIza", _ANUD, 35, 35),
    ("google-oauth-secret", "GOCSPX-", _ANUD, 24, 40),
    ("google-oauth-token", "ya29.", _ANUDD, 20, 2048),
    ("huggingface-token", "hf_", _AN, 30, 40),
    ("huggingface-token", "api_org_", _AN, 30, 40),
    ("sendgrid-key", "SG.", _ANUDD, 60, 80),
    ("digitalocean-token", "dop_v1_", _HEX, 64, 64),
    ("digitalocean-token", "doo_v1_", _HEX, 64, 64),
    ("digitalocean-token", "dor_v1_", _HEX, 64, 64),
    ("docker-token", "dckr_pat_", _ANUD, 20, 100),
    ("docker-token", "dckr_oat_", _ANUD, 20, 100),
    ("shopify-token", "shpat_", _HEX, 32, 32),
    ("shopify-token", "shpca_", _HEX, 32, 32),
    ("shopify-token", "shppa_", _HEX, 32, 32),
    ("shopify-token", "shpss_", _HEX, 32, 32),
    ("atlassian-token", "ATATT3", _B64U, 150, 300),
    ("bitbucket-token", "ATBB", _AN, 28, 64),
    ("databricks-token", "dapi", _HEX, 32, 34),
    ("doppler-token", "dp.pt.", _AN, 40, 50),
    ("doppler-token", "dp.st.", _ANUDD, 40, 80),
    ("doppler-token", "dp.sa.", _AN, 40, 50),
    ("doppler-token", "dp.ct.", _AN, 40, 50),
    ("doppler-token", "dp.scim.", _AN, 40, 50),
    ("doppler-token", "dp.audit.", _AN, 40, 50),
    ("grafana-token", "glc_", _B64, 32, 400),
    ("grafana-token", "glsa_", _ANU, 32, 50),
    ("grafana-token", "eyJrIjoi", _B64, 70, 400),
    ("vault-token", "hvs.", _ANUD, 24, 300),
    ("vault-token", "hvb.", _ANUD, 100, 400),
    ("vault-token", "hvr.", _ANUD, 24, 300),
    ("postman-key", "PMAK-", _HEX + "-", 59, 59),
    ("pulumi-token", "pul-", _HEX, 40, 40),
    ("sentry-token", "sntrys_", _B64U + "+/", 50, 400),
    ("sentry-token", "sntryu_", _HEX, 64, 64),
    ("perplexity-key", "pplx-", _AN, 40, 60),
    ("groq-key", "gsk_", _AN, 40, 64),
    ("replicate-token", "r8_", _AN, 30, 48),
    ("xai-key", "xai-", _AN, 60, 100),
    ("linear-key", "lin_api_", _AN, 40, 40),
    ("langsmith-key", "lsv2_pt_", _ANU, 32, 64),
    ("langsmith-key", "lsv2_sk_", _ANU, 32, 64),
    ("notion-token", "ntn_", _AN, 40, 50),
    ("notion-token", "secret_", _AN, 43, 43),
    ("heroku-key", "HRKU-AA", _ANUD, 58, 58),
    ("flyio-token", "fo1_", _ANUD, 43, 43),
    ("flyio-token", "fm1r_", _B64, 100, 2048),
    ("flyio-token", "fm1a_", _B64, 100, 2048),
    ("flyio-token", "fm2_", _B64, 100, 2048),
    ("1password-token", "ops_eyJ", _B64, 250, 4096),
    ("age-secret-key", "AGE-SECRET-KEY-1", _UD, 58, 58),
    ("square-token", "sq0atp-", _ANUD, 22, 60),
    ("square-token", "sq0csp-", _ANUD, 40, 60),
    ("square-token", "EAAA", _ANUD, 60, 64),
    ("facebook-token", "EAAB", _AN, 90, 400),
    ("facebook-token", "EAAC", _AN, 90, 400),
    ("facebook-token", "EAAG", _AN, 90, 400),
    ("facebook-token", "EAAM", _AN, 90, 400),
    ("twilio-key", "SK", _HEX, 32, 32),
    ("mailgun-key", "key-", _HEX, 32, 32),
    ("alibaba-key", "LTAI", _AN, 20, 24),
    ("artifactory-key", "AKCp", _AN, 60, 80),
    ("artifactory-key", "cmVmd", _AN, 59, 59),
    ("easypost-key", "EZAK", _AN, 54, 54),
    ("easypost-key", "EZTK", _AN, 54, 54),
    ("dynatrace-token", "dt0c01.", _ANUDD, 80, 100),
    ("planetscale-token", "pscale_tkn_", _ANUDD + "=", 32, 64),
    ("planetscale-token", "pscale_pw_", _ANUDD + "=", 32, 64),
    ("planetscale-token", "pscale_oauth_", _ANUDD + "=", 32, 64),
    ("prefect-key", "pnu_", _AN, 36, 36),
    ("readme-key", "rdme_", _AN, 70, 70),
    ("rubygems-key", "rubygems_", _HEX, 48, 48),
    ("scalingo-token", "tk-us-", _ANUD, 48, 48),
    ("sendinblue-key", "xkeysib-", _AN + "-", 70, 90),
    ("shippo-token", "shippo_live_", _HEX, 40, 40),
    ("shippo-token", "shippo_test_", _HEX, 40, 40),
    ("typeform-token", "tfp_", _ANUDD + "=", 50, 70),
    ("frameio-token", "fio-u-", _ANUD + "=", 64, 64),
    ("duffel-token", "duffel_live_", _ANUD + "=", 43, 43),
    ("duffel-token", "duffel_test_", _ANUD + "=", 43, 43),
    ("flutterwave-key", "FLWSECK_TEST-", _AN + "-", 12, 40),
    ("flutterwave-key", "FLWSECK-", _AN + "-", 12, 40),
    ("clojars-token", "CLOJARS_", _AN, 60, 60),
    ("adobe-secret", "p8e-", _AN, 32, 32),
    ("infracost-token", "ico-", _AN, 32, 32),
    ("newrelic-key", "NRAK-", _UD, 27, 27),
    ("newrelic-key", "NRII-", _ANUD, 32, 32),
    ("supabase-token", "sbp_", _HEX, 40, 40),
    ("supabase-token", "sb_secret_", _ANUD, 20, 80),
    ("netlify-token", "nfp_", _AN, 36, 40),
    ("buildkite-token", "bkua_", _HEX, 40, 40),
    ("circleci-token", "CCIPAT_", _ANU, 20, 80),
    ("render-key", "rnd_", _AN, 28, 40),
    ("tailscale-key", "tskey-", _ANUD, 20, 120),
    ("mapbox-token", "sk.eyJ", _ANUDD, 60, 400),
    ("sourcegraph-token", "sgp_", _ANU, 40, 80),
    ("contentful-token", "CFPAT-", _ANUD, 40, 50),
    ("figma-token", "figd_", _ANUD, 30, 60),
    ("cloudflare-ca-key", "v1.0-", _HEX + "-", 160, 180),
    ("crates-token", "cio", _AN, 32, 32),
    ("nuget-key", "oy2", _AN, 43, 43),
    ("braintree-token", "access_token$production$", _AN + "$", 40, 80),
    ("braintree-token", "access_token$sandbox$", _AN + "$", 40, 80),
    ("firecrawl-key", "fc-", _HEX, 32, 32),
    ("resend-key", "re_", _ANU, 30, 40),
    ("fireworks-key", "fw_", _AN, 20, 64),
    # A private key block, base64-encoded again (Kubernetes secrets, CI variables).
    ("private-key", "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBL", _B64, 60, 16384),
    ("private-key", "LS0tLS1CRUdJTiBQUklWQVRFIEtF", _B64, 60, 16384),
    ("private-key", "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtF", _B64, 60, 16384),
    ("private-key", "LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZ", _B64, 60, 16384),
    ("private-key", "LS0tLS1CRUdJTiBFTkNSWVBURUQgUFJJVkFURSBL", _B64, 60, 16384),
    ("private-key", "LS0tLS1CRUdJTiBEU0EgUFJJVkFURSBL", _B64, 60, 16384),
    ("private-key", "LS0tLS1CRUdJTiBQR1AgUFJJVkFURSBLRVkgQkxP", _B64, 60, 16384),
)
# Prefixes common in words or identifiers: their bodies must also look generated.
_RANDOM_BODY = frozenset(
    ("sk-", "cio", "oy2", "re_", "key-", "secret_", "SK", "EAAA", "dapi", "fc-", "ico-", "p8e-", "fw_")
)
_VENDOR_INDEX: dict[str, list[tuple[str, str, str, int, int]]] = {}
for _vendor in _VENDORS:
    if _vendor[1][0] not in "./":
        _VENDOR_INDEX.setdefault(_vendor[1][:2], []).append(_vendor)
_VENDOR_URLS = tuple(v for v in _VENDORS if v[1][0] in "./" or "/" in v[1])


def _vendor_spans(text: str) -> Iterator[Span]:
    """Vendor-prefixed tokens. Why not one `find` per prefix: 170 searches of a 16 KB
    prompt cost milliseconds; one pass over the text's long words costs a tenth of that."""
    for m in _regex(r"(?<![A-Za-z0-9_-])[A-Za-z0-9][A-Za-z0-9_.$-]{11}").finditer(text):
        start = m.start()
        for vendor in _VENDOR_INDEX.get(text[start : start + 2], ()):
            if text.startswith(vendor[1], start):
                yield from _vendor_token(text, start, vendor)
    for vendor in _VENDOR_URLS:
        start = text.find(vendor[1])
        while start >= 0:
            yield from _vendor_token(text, start, vendor)
            start = text.find(vendor[1], start + 1)


def _vendor_token(text: str, start: int, vendor: tuple[str, str, str, int, int]) -> Iterator[Span]:
    family, prefix, chars, shortest, longest = vendor
    body_start = start + len(prefix)
    body = _regex(f"[{chars}]*").match(text, body_start, body_start + longest + 1).group()  # type: ignore[union-attr]
    if shortest <= len(body) <= longest and _real_body(prefix, body):
        yield start, body_start + len(body), family


def _real_body(prefix: str, body: str) -> bool:
    if _is_placeholder(body) or (prefix[0] in "./" and "@" not in body and len(set(body)) < 8):
        return False
    if prefix in _RANDOM_BODY:
        longest = max(_regex(r"[-_.]").split(body), key=len)
        return len(longest) >= 16 and _classes(longest) >= 2 and not longest.isdigit()
    return True
