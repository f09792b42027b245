"""Pluggable HTTP providers: web search (SearxNG, Brave) and advisory look-up (the OSV API; the local
mirror, ``osv_mirror.OsvMirror``, is the offline one).

Each provider answers ``ProviderHit``s or raises ``SourceUnavailable`` with the cause (connection
refused, timeout, HTTP status, a body that is not the expected JSON). Every request carries the
configured timeout; the agent adds its own per-source timeout and circuit breaker on top.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, cast

import httpx

from daemon.config import RetrievalConfig
from daemon.errors import SourceUnavailable

__all__ = [
    "AdvisoryProvider",
    "BraveSearch",
    "OsvAdvisories",
    "ProviderHit",
    "SearxngSearch",
    "WebSearchProvider",
    "web_provider",
]


_ADVISORY_ID = re.compile(r"^(CVE-\d{4}-\d{4,}|GHSA(-[0-9a-z]{4}){3}|PYSEC-\d{4}-\d+)$", re.I)
_PINNED = re.compile(r"^([A-Za-z][\w.-]*)==(\d[\w.+-]*)$")


@dataclass(frozen=True, kw_only=True)
class ProviderHit:
    title: str
    url: str
    text: str
    ref: str | None = None


class WebSearchProvider(Protocol):
    @property
    def name(self) -> str: ...

    async def search(self, query: str, *, limit: int) -> list[ProviderHit]: ...


class AdvisoryProvider(Protocol):
    @property
    def name(self) -> str: ...

    async def lookup(self, query: str, *, limit: int) -> list[ProviderHit]: ...


async def _get_json(
    method: str,
    url: str,
    *,
    seconds: float,
    params: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    body: Mapping[str, object] | None = None,
) -> Any:
    try:
        async with httpx.AsyncClient(timeout=httpx.Timeout(seconds), follow_redirects=True) as client:
            response = await client.request(method, url, params=params, headers=headers, json=body)
    except httpx.TimeoutException as exc:
        raise SourceUnavailable(f"{url} did not answer within {seconds:g} s", cause=exc) from exc
    except httpx.HTTPError as exc:
        raise SourceUnavailable(f"{url} cannot be reached", cause=exc) from exc
    if response.status_code == 404:
        return None
    if response.status_code >= 400:
        raise SourceUnavailable(f"{url} answered HTTP {response.status_code}")
    try:
        return response.json()
    except ValueError as exc:
        raise SourceUnavailable(f"{url} answered something that is not JSON", cause=exc) from exc


def _items(data: Any, *keys: str) -> list[dict[str, Any]]:
    node: Any = data
    for key in keys:
        node = cast("dict[str, Any]", node).get(key) if isinstance(node, dict) else None
    if not isinstance(node, list):
        return []
    return [cast("dict[str, Any]", i) for i in cast("list[Any]", node) if isinstance(i, dict)]


class SearxngSearch:
    """SearxNG's JSON API: ``GET {base}/search?q=...&format=json`` -> ``results[].{title,url,content}``."""

    name = "searxng"

    def __init__(self, base_url: str, *, timeout: float) -> None:
        self._url = base_url.rstrip("/") + "/search"
        self._timeout = timeout

    async def search(self, query: str, *, limit: int) -> list[ProviderHit]:
        data = await _get_json("GET", self._url, seconds=self._timeout, params={"q": query, "format": "json"})
        return [
            ProviderHit(title=str(r.get("title", "")), url=str(r.get("url", "")), text=str(r.get("content", "")))
            for r in _items(data, "results")[:limit]
            if r.get("url")
        ]


class BraveSearch:
    """Brave Search API: ``GET {url}?q=...`` with ``X-Subscription-Token`` -> ``web.results[]``."""

    name = "brave"

    def __init__(self, url: str, *, api_key: str | None, timeout: float) -> None:
        self._url = url
        self._key = api_key
        self._timeout = timeout

    async def search(self, query: str, *, limit: int) -> list[ProviderHit]:
        headers = {"Accept": "application/json", **({"X-Subscription-Token": self._key} if self._key else {})}
        data = await _get_json(
            "GET", self._url, seconds=self._timeout, params={"q": query, "count": str(limit)}, headers=headers
        )
        return [
            ProviderHit(title=str(r.get("title", "")), url=str(r.get("url", "")), text=str(r.get("description", "")))
            for r in _items(data, "web", "results")[:limit]
            if r.get("url")
        ]


class OsvAdvisories:
    """The OSV API: an advisory id -> ``GET /v1/vulns/{id}``; ``name==version`` -> ``POST /v1/query`` (PyPI)."""

    name = "osv"

    def __init__(self, base_url: str, *, timeout: float) -> None:
        self._base = base_url.rstrip("/")
        self._timeout = timeout

    def _hit(self, vuln: Mapping[str, Any]) -> ProviderHit:
        vid = str(vuln.get("id", "?"))
        summary = str(vuln.get("summary") or vuln.get("details") or "")[:1500]
        aliases = ", ".join(str(a) for a in cast("list[Any]", vuln.get("aliases") or []))
        text = f"{vid}: {summary}" + (f" (aliases: {aliases})" if aliases else "")
        return ProviderHit(title=vid, url=f"https://osv.dev/vulnerability/{vid}", text=text, ref=vid)

    async def lookup(self, query: str, *, limit: int) -> list[ProviderHit]:
        query = query.strip()
        if _ADVISORY_ID.match(query):
            data = await _get_json("GET", f"{self._base}/v1/vulns/{query.upper()}", seconds=self._timeout)
            return [self._hit(cast("dict[str, Any]", data))] if isinstance(data, dict) else []
        pinned = _PINNED.match(query)
        if pinned is None:
            return []
        body = {"package": {"name": pinned.group(1), "ecosystem": "PyPI"}, "version": pinned.group(2)}
        data = await _get_json("POST", f"{self._base}/v1/query", seconds=self._timeout, body=body)
        return [self._hit(v) for v in _items(data, "vulns")[:limit]]


def web_provider(config: RetrievalConfig, env: Mapping[str, str]) -> WebSearchProvider | None:
    """The configured web search provider, or None when ``retrieval.web_url`` is unset."""
    if config.web_url is None:
        return None
    if config.web_provider == "brave":
        key = env.get(config.web_api_key_env) if config.web_api_key_env else None
        return BraveSearch(config.web_url, api_key=key, timeout=config.http_timeout_seconds)
    return SearxngSearch(config.web_url, timeout=config.http_timeout_seconds)
