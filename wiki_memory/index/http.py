"""One JSON POST to a model server (embeddings, rerank), standard library only.

The embedding provider and the reranker speak to OpenAI-, Cohere- or Jina-style servers the
same way: a JSON body, an optional bearer key named by an environment variable, a timeout, and
one line saying what went wrong (HTTP status with the start of its body, refused, timed out,
not JSON), raised as the caller's own error so that each falls back in its own way.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any


def post_json(
    url: str, body: dict[str, Any], *, api_key_env: str | None, timeout: float, error: type[Exception]
) -> Any:
    """POST `body` to `url`; the answer's JSON, or `error` with one line naming `url`."""
    headers = {"Content-Type": "application/json", "User-Agent": "wiki-memory"}
    key = os.environ.get(api_key_env) if api_key_env else None
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST")
    base = url.rsplit("/", 1)[0]
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as e:
        detail = e.read(300).decode("utf-8", "replace").strip().replace("\n", " ")
        raise error(f"{base} answered HTTP {e.code}: {detail}") from None
    except (OSError, ValueError) as e:  # refused, timed out, not JSON
        raise error(f"{base}: {e}") from None
