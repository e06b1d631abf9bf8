#!/usr/bin/env python3
"""End-to-end checks of `ken serve --mcp` against real MCP clients.

Usage:
    python mcp_clients.py --ken PATH_TO_KEN --fixture DIR [--node-bin DIR] [--skip-node]

Run it with the Python from `.ci/install_mcp_clients.sh` (it needs the `mcp` and
`jsonschema` packages); `--node-bin` is the folder that script prints as E2E_NODE_BIN
(Node 22 plus `inspector` and `conformance` wrappers).

Sections, each printing one `PASS name` / `FAIL name: why` line per check:
  fixture     copy the fixture to a temp dir, git init + commit, `ken index build`
  sdk-stdio   official Python SDK over stdio: tools, schemas, every tool, resources
  sdk-http    the same over streamable HTTP (`ken serve --mcp --http 127.0.0.1:0`)
  http-raw    hand-written POSTs: initialize at 2025-06-18 and 2025-11-25, session id,
              tools/list in that session, Host-header (DNS rebinding) rejection
  inspector   MCP Inspector CLI: tools/list + tools/call over stdio and HTTP
  conformance the official conformance suite's server scenarios that apply to a
              tools+resources server
Exits 1 if any check failed, 2 on a usage error.
"""
from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable

try:
    import jsonschema
    from mcp import Client, MCPError, StdioServerParameters
    from mcp.client.stdio import stdio_client
except ImportError as exc:  # pragma: no cover - environment problem, not a test failure
    sys.exit(
        f"mcp_clients.py needs the `mcp` and `jsonschema` packages ({exc}); run it with the "
        "Python that .ci/install_mcp_clients.sh prints as E2E_PYTHON"
    )

TOOL_NAMES = [
    "search", "symbol", "callers", "callees", "refs", "deps", "context",
    "impact", "overview", "index_status", "read_span", "reindex",
]
# What `ken serve` offers by default (`--tools core`); the SDK checks run `--tools full`.
CORE_TOOL_NAMES = ["search", "context", "symbol", "callers", "refs", "impact", "read_span", "overview"]
CORE_TOOLS_LIST_MAX_CHARS = 8000
READ_WRITE_TOOLS = {"reindex"}
RESOURCE_URIS = ["kenning://overview", "kenning://index-status"]
PROTOCOL_VERSIONS = ["2025-06-18", "2025-11-25"]
BAD_SPANS = ["../etc/passwd", "../etc/passwd:1-3"]  # must be refused, naming the path

# Conformance server scenarios (package @modelcontextprotocol/conformance) that a server
# with only tools and resources can pass. The rest of the suite needs fixed test tools
# (test_simple_text, test_image_content, ... json_schema_2020_12_tool, test_reconnection),
# fixed test resources (test://static-text, ...), prompts, logging, completions,
# sampling, elicitation or subscriptions.
CONFORMANCE_SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
]

CALL_TIMEOUT = 120.0  # seconds for one MCP request (context/impact may be slow on a cold index)
START_TIMEOUT = 60.0  # seconds for the HTTP server to print its address
SECTION_TIMEOUT = 900.0  # seconds for one whole SDK session


# --------------------------------------------------------------------------- reporting

class Report:
    def __init__(self) -> None:
        self.passed: list[str] = []
        self.failed: list[str] = []
        self.skipped: list[str] = []
        self.infos: list[str] = []

    def ok(self, name: str, detail: str = "") -> None:
        self.passed.append(name)
        print(f"PASS {name}" + (f" ({detail})" if detail else ""), flush=True)

    def fail(self, name: str, why: str) -> None:
        self.failed.append(name)
        why = why.strip().replace("\n", "\n     ")
        print(f"FAIL {name}: {why}", flush=True)

    def skip(self, name: str, why: str) -> None:
        self.skipped.append(name)
        print(f"SKIP {name}: {why}", flush=True)

    def info(self, text: str) -> None:
        self.infos.append(text)
        print(f"INFO {text}", flush=True)

    def check(self, name: str, cond: bool, why: str = "", detail: str = "") -> bool:
        if cond:
            self.ok(name, detail)
        else:
            self.fail(name, why or "condition false")
        return cond

    def summary(self) -> int:
        if self.failed:
            print("\nfailed checks:\n  " + "\n  ".join(self.failed), flush=True)
        # Last line, in the plain 'N passed, N failed, N skipped' form CI logs recognise.
        print(f"\n{len(self.passed)} passed, {len(self.failed)} failed, {len(self.skipped)} skipped", flush=True)
        return 1 if self.failed else 0


R = Report()


def short(obj: Any, limit: int = 600) -> str:
    text = obj if isinstance(obj, str) else json.dumps(obj, default=str)
    return text if len(text) <= limit else text[:limit] + f"... [{len(text)} chars]"


def exc_text(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(exc_text(e) for e in exc.exceptions)
    msg = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, MCPError):
        msg += f" (code {exc.error.code}, data {short(exc.error.data, 200)})"
    return msg


# --------------------------------------------------------------------------- fixture

def impact_patch(repo: Path) -> str:
    """A unified diff of shop/pricing.py that changes apply_discount (built from the file)."""
    rel = "shop/pricing.py"
    old = (repo / rel).read_text().splitlines(keepends=True)
    target = "    return amount * (100 - percent) / 100\n"
    if target not in old:
        raise RuntimeError(f"{rel} no longer has the line the impact patch edits")
    new = [
        "    return round(amount * (100 - percent) / 100, 2)\n" if line == target else line
        for line in old
    ]
    body = "".join(difflib.unified_diff(old, new, f"a/{rel}", f"b/{rel}", n=3))
    return f"diff --git a/{rel} b/{rel}\n" + body


def server_env() -> dict[str, str]:
    """Settings passed to stdio servers on top of the clients' minimal default environment."""
    return {k: v for k, v in os.environ.items() if k.startswith(("KEN_", "KENNING_"))}


def materialize(fixture: Path, ken: Path, work: Path) -> Path | None:
    repo = work / "repo"
    name = "fixture"
    try:
        shutil.copytree(fixture, repo, ignore=shutil.ignore_patterns(".git", ".kenning*", "__pycache__"))
        env = dict(os.environ, GIT_AUTHOR_NAME="e2e", GIT_AUTHOR_EMAIL="e2e@example.invalid",
                   GIT_COMMITTER_NAME="e2e", GIT_COMMITTER_EMAIL="e2e@example.invalid")
        for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                    ["git", "commit", "-q", "--no-gpg-sign", "-m", "fixture"]):
            subprocess.run(cmd, cwd=repo, env=env, check=True, capture_output=True, text=True, timeout=60)
        R.ok(f"{name}: copied and committed", str(repo))
    except subprocess.CalledProcessError as exc:
        R.fail(f"{name}: copied and committed", f"{exc.cmd}: {exc.stderr}")
        return None
    except Exception as exc:
        R.fail(f"{name}: copied and committed", exc_text(exc))
        return None
    t0 = time.monotonic()
    try:
        proc = subprocess.run([str(ken), "index", "build", str(repo)], capture_output=True, text=True,
                              timeout=600, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        R.fail(f"{name}: ken index build", "timed out after 600 s")
        return None
    if proc.returncode != 0:
        R.fail(f"{name}: ken index build", f"exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        return None
    R.ok(f"{name}: ken index build", f"{time.monotonic() - t0:.1f}s")
    return repo


# --------------------------------------------------------------------------- schema helpers

def validator_for(schema: dict[str, Any]) -> Any:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def schema_errors(schema: dict[str, Any], instance: Any) -> list[str]:
    v = validator_for(schema)
    out = []
    for err in sorted(v.iter_errors(instance), key=lambda e: list(e.absolute_path)):
        path = "/".join(str(p) for p in err.absolute_path) or "(root)"
        out.append(f"{path}: {err.message}")
    return out


def wire(model: Any) -> dict[str, Any]:
    """A pydantic result as it was on the wire (camelCase, no unset fields)."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def tool_arguments(repo: Path) -> dict[str, dict[str, Any]]:
    return {
        "search": {"query": "discount", "mode": "hybrid", "limit": 5},
        "symbol": {"name": "Cart"},
        "callers": {"symbol": "apply_discount", "depth": 2},
        "callees": {"symbol": "shop.cart.Cart.total"},
        "refs": {"symbol": "Cart", "limit": 20},
        "deps": {"file": "shop/cart.py"},
        "context": {"task": "the cart total is wrong when a discount code is applied", "max_tokens": 2000},
        "impact": {"patch": impact_patch(repo)},
        "overview": {},
        "index_status": {},
        "read_span": {"span": "shop/cart.py:1-10"},
        "reindex": {},
    }


def text_blocks(content: list[dict[str, Any]]) -> list[str]:
    return [c["text"] for c in content if c.get("type") == "text"]


def check_tool_result(label: str, tool: str, result: dict[str, Any], out_schema: dict[str, Any] | None) -> None:
    """The checks every successful tool result must satisfy."""
    name = f"{label}: {tool}"
    problems: list[str] = []
    if result.get("isError"):
        R.fail(name, f"isError true: {short(text_blocks(result.get('content', [])))}")
        return
    sc = result.get("structuredContent")
    if not isinstance(sc, dict):
        R.fail(name, f"no structuredContent object: {short(result)}")
        return
    if out_schema is None:
        problems.append("tool has no outputSchema")
    else:
        try:
            errs = schema_errors(out_schema, sc)
        except jsonschema.SchemaError as exc:
            errs = [f"outputSchema is not a valid JSON Schema: {exc.message}"]
        problems += [f"structuredContent vs outputSchema: {e}" for e in errs[:5]]
    gen = sc.get("generation")
    if not (isinstance(gen, int) and not isinstance(gen, bool)):
        problems.append(f"generation is not an int: {gen!r}")
    if not isinstance(sc.get("coverage"), dict):
        problems.append(f"coverage is not an object: {sc.get('coverage')!r}")
    # The model reads a compact rendering, not the structured JSON a second time.
    texts = text_blocks(result.get("content", []))
    if not texts:
        problems.append("no text content block")
    else:
        text = "\n".join(texts)
        if "coverage: generation " not in text:
            problems.append(f"text does not state its coverage: {short(text, 200)}")
        if len(text) > len(json.dumps(sc, separators=(",", ":"))):
            problems.append(f"text is longer than the structured answer: {short(text, 200)}")
    if problems:
        R.fail(name, "; ".join(problems))
    else:
        R.ok(name, f"generation {gen}")


# --------------------------------------------------------------------------- SDK checks

async def with_timeout(coro: Any, seconds: float = CALL_TIMEOUT) -> Any:
    return await asyncio.wait_for(coro, seconds)


def run_guarded(name: str, coro: Any, seconds: float = SECTION_TIMEOUT) -> None:
    """Run one SDK section with an overall deadline, so a server that stops answering
    fails the section instead of hanging the run."""
    try:
        asyncio.run(asyncio.wait_for(coro, seconds))
    except (asyncio.TimeoutError, TimeoutError):
        R.fail(name, f"did not finish within {seconds:.0f}s")
    except Exception as exc:
        R.fail(name, exc_text(exc))


async def exercise(label: str, client: Client, repo: Path) -> None:
    """Everything the Python SDK checks, on an open (initialized) client."""
    R.check(f"{label}: negotiated protocol version", client.protocol_version in PROTOCOL_VERSIONS,
            f"got {client.protocol_version!r}", detail=str(client.protocol_version))
    caps = client.server_capabilities
    R.check(f"{label}: capabilities advertise tools and resources",
            caps.tools is not None and caps.resources is not None, f"capabilities {short(wire(caps))}")

    # -- tools/list (following cursors)
    tools: dict[str, dict[str, Any]] = {}
    try:
        cursor = None
        for _ in range(20):
            page = await with_timeout(client.list_tools(cursor=cursor))
            for t in page.tools:
                tools[t.name] = wire(t)
            cursor = page.next_cursor
            if not cursor:
                break
    except Exception as exc:
        R.fail(f"{label}: tools/list", exc_text(exc))
        return
    names = sorted(tools)
    R.check(f"{label}: tools/list names", names == sorted(TOOL_NAMES),
            f"expected {sorted(TOOL_NAMES)}, got {names}", detail=f"{len(names)} tools")

    for tname in TOOL_NAMES:
        t = tools.get(tname)
        if t is None:
            continue
        problems = []
        ann = t.get("annotations") or {}
        want_ro = tname not in READ_WRITE_TOOLS
        if ann.get("readOnlyHint") is not want_ro:
            problems.append(f"readOnlyHint {ann.get('readOnlyHint')!r}, want {want_ro}")
        if ann.get("openWorldHint") is not False:
            problems.append(f"openWorldHint {ann.get('openWorldHint')!r}, want False")
        if not t.get("description"):
            problems.append("no description (the conformance tools-list scenario requires one)")
        for key in ("inputSchema", "outputSchema"):
            schema = t.get(key)
            if not isinstance(schema, dict):
                problems.append(f"no {key}")
                continue
            if schema.get("type") != "object":
                problems.append(f"{key}.type is {schema.get('type')!r}, must be 'object'")
            try:
                validator_for(schema)
            except jsonschema.SchemaError as exc:
                problems.append(f"{key} is not a valid JSON Schema: {exc.message}")
        R.check(f"{label}: {tname} listing (annotations, schemas)", not problems, "; ".join(problems))

    # -- tools/call, every tool
    args = tool_arguments(repo)
    for tname in TOOL_NAMES:
        t = tools.get(tname)
        if t is None:
            R.fail(f"{label}: {tname}", "tool not listed")
            continue
        try:
            in_errs = schema_errors(t["inputSchema"], args[tname])
        except Exception as exc:
            in_errs = [exc_text(exc)]
        if in_errs:
            R.fail(f"{label}: {tname} arguments match inputSchema", "; ".join(in_errs[:5]))
        try:
            res = await with_timeout(client.call_tool(tname, args[tname]))
        except Exception as exc:
            R.fail(f"{label}: {tname}", f"call raised {exc_text(exc)}")
            continue
        check_tool_result(label, tname, wire(res), t.get("outputSchema"))

    # -- read_span outside the repository must be refused, naming the path
    for bad in BAD_SPANS:
        name = f"{label}: read_span {bad} refused"
        try:
            res = wire(await with_timeout(client.call_tool("read_span", {"span": bad})))
            msg = " ".join(text_blocks(res.get("content", [])))
            if not res.get("isError"):
                R.fail(name, f"isError is not true: {short(res)}")
            else:
                R.check(name, "etc/passwd" in msg, f"error text does not name the path: {short(msg)}",
                        detail=f"isError result: {short(msg, 120)}")
        except MCPError as exc:
            text = exc.error.message + json.dumps(exc.error.data, default=str)
            R.check(name, "etc/passwd" in text, f"JSON-RPC error does not name the path: {exc_text(exc)}",
                    detail=f"JSON-RPC error {exc.error.code}: {short(exc.error.message, 120)}")
        except Exception as exc:
            R.fail(name, exc_text(exc))

    # -- resources
    try:
        listed = await with_timeout(client.list_resources())
        uris = sorted(str(r.uri) for r in listed.resources)
        missing = [u for u in RESOURCE_URIS if u not in uris]
        unnamed = [str(r.uri) for r in listed.resources if not r.name]
        R.check(f"{label}: resources/list", not missing and not unnamed,
                f"missing {missing}, unnamed {unnamed}; listed {uris}", detail=", ".join(uris))
    except Exception as exc:
        R.fail(f"{label}: resources/list", exc_text(exc))
    for uri in RESOURCE_URIS:
        name = f"{label}: resources/read {uri}"
        try:
            rr = wire(await with_timeout(client.read_resource(uri)))
            contents = rr.get("contents") or []
            if not contents:
                R.fail(name, "no contents")
                continue
            c = contents[0]
            problems = []
            if c.get("uri") != uri:
                problems.append(f"contents[0].uri is {c.get('uri')!r}")
            text = c.get("text")
            if not text:
                problems.append("contents[0] has no text")
            elif "json" in (c.get("mimeType") or ""):
                try:
                    doc = json.loads(text)
                    if not isinstance(doc, dict) or "generation" not in doc:
                        problems.append("JSON resource has no generation")
                except json.JSONDecodeError as exc:
                    problems.append(f"mimeType says JSON but text does not parse: {exc}")
            R.check(name, not problems, "; ".join(problems), detail=c.get("mimeType") or "no mimeType")
        except Exception as exc:
            R.fail(name, exc_text(exc))


async def sdk_session(label: str, target: Callable[[], Any], repo: Path) -> None:
    """Connect with the initialize handshake (mode='legacy') and run every check."""
    try:
        async with Client(target(), mode="legacy", read_timeout_seconds=CALL_TIMEOUT) as client:
            R.ok(f"{label}: initialize", f"{client.server_info.name if client.server_info else '?'} "
                                         f"@ {client.protocol_version}")
            await exercise(label, client, repo)
    except Exception as exc:
        R.fail(f"{label}: session", exc_text(exc) + "\n" + "".join(traceback.format_exception(exc)[-6:]))


async def sdk_auto(label: str, target: Callable[[], Any]) -> None:
    """The SDK's default connect (mode='auto'): it first probes `server/discover` (the
    2026-07-28 era) and falls back to initialize on any error. A handshake-only server must
    answer the probe with an error promptly (ignoring it costs a 10 s timeout); a server
    that answers it is then used at 2026-07-28, so a tool call must work there too."""
    name = f"{label}: default client mode=auto (discover probe or initialize)"
    t0 = time.monotonic()
    try:
        async with Client(target(), read_timeout_seconds=CALL_TIMEOUT) as client:
            tools = await with_timeout(client.list_tools())
            took = time.monotonic() - t0
            res = wire(await with_timeout(client.call_tool("index_status", {})))
            problems = []
            if len(tools.tools) < len(TOOL_NAMES):
                problems.append(f"{len(tools.tools)} tools listed")
            if took >= 8.0:
                problems.append(f"connect+tools/list took {took:.1f}s (is the `server/discover` probe ignored?)")
            if res.get("isError") or not isinstance(res.get("structuredContent"), dict):
                problems.append(f"index_status: {short(res)}")
            R.check(name, not problems, "; ".join(problems),
                    detail=f"negotiated {client.protocol_version}, {took:.1f}s")
    except Exception as exc:
        R.fail(name, exc_text(exc))


# --------------------------------------------------------------------------- HTTP server

class HttpServer:
    """`ken serve --mcp --http 127.0.0.1:0 --repo REPO`, address parsed from stderr."""

    def __init__(self, ken: Path, repo: Path, log: Path) -> None:
        self.ken, self.repo, self.log_path = ken, repo, log
        self.proc: subprocess.Popen[str] | None = None
        self.base: str | None = None
        self._lines: list[str] = []
        self._ready = threading.Event()

    def _drain(self) -> None:
        assert self.proc and self.proc.stderr
        with open(self.log_path, "w") as log:
            for line in self.proc.stderr:
                log.write(line)
                log.flush()
                self._lines.append(line)
                m = re.search(r"listening on (http://[^\s/]+)", line)
                if m and not self._ready.is_set():
                    self.base = m.group(1).rstrip(".,;")
                    self._ready.set()
        self._ready.set()

    def start(self) -> str | None:
        self.proc = subprocess.Popen(
            [str(self.ken), "serve", "--mcp", "--tools", "full", "--http", "127.0.0.1:0", "--repo", str(self.repo)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        threading.Thread(target=self._drain, daemon=True).start()
        self._ready.wait(START_TIMEOUT)
        if not self.base:
            tail = "".join(self._lines[-20:])
            state = "exited " + str(self.proc.poll()) if self.proc.poll() is not None else "still running"
            R.fail("http: server start", f"no 'listening on http://...' line within {START_TIMEOUT:.0f}s "
                                         f"(process {state}); stderr:\n{tail}")
            return None
        R.ok("http: server start", self.base)
        return self.base + "/mcp"

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


# --------------------------------------------------------------------------- raw HTTP

def post(url: str, body: dict[str, Any] | None, headers: dict[str, str] | None = None,
         method: str = "POST", timeout: float = 30.0) -> tuple[int, dict[str, str], list[Any], str]:
    """One request; returns (status, headers lower-cased, JSON-RPC messages in the body, raw body)."""
    data = json.dumps(body).encode() if body is not None else None
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    h.update(headers or {})
    req = urllib.request.Request(url, data=data, headers=h, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            status, hdrs, raw = resp.status, dict(resp.headers.items()), resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        status, hdrs, raw = exc.code, dict(exc.headers.items()), exc.read().decode("utf-8", "replace")
    hdrs = {k.lower(): v for k, v in hdrs.items()}
    ctype = hdrs.get("content-type", "")
    messages: list[Any] = []
    if raw.strip():
        if ctype.startswith("text/event-stream"):
            # SSE: events separated by blank lines; `data:` lines of one event concatenate.
            for event in re.split(r"\r?\n\r?\n", raw):
                payload = "\n".join(line[5:].lstrip(" ") for line in event.splitlines() if line.startswith("data:"))
                if payload.strip():
                    try:
                        messages.append(json.loads(payload))
                    except json.JSONDecodeError:
                        pass
        else:
            try:
                messages.append(json.loads(raw))
            except json.JSONDecodeError:
                pass
    return status, hdrs, messages, raw


def response_for(messages: list[Any], rid: Any) -> dict[str, Any] | None:
    for m in messages:
        if isinstance(m, dict) and m.get("id") == rid and ("result" in m or "error" in m):
            return m
    return None


def raw_http(url: str) -> None:
    for version in PROTOCOL_VERSIONS:
        label = f"http-raw {version}"
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "kenning-e2e-raw", "version": "0"}}}
        try:
            status, hdrs, msgs, raw = post(url, init)
        except Exception as exc:
            R.fail(f"{label}: initialize", exc_text(exc))
            continue
        resp = response_for(msgs, 1)
        if status != 200 or not resp or "result" not in resp:
            R.fail(f"{label}: initialize", f"HTTP {status}, body {short(raw)}")
            continue
        got = resp["result"].get("protocolVersion")
        R.check(f"{label}: initialize echoes protocolVersion", got == version, f"got {got!r}")
        sid = hdrs.get("mcp-session-id")
        if not R.check(f"{label}: Mcp-Session-Id header", bool(sid), f"headers {short(hdrs)}", detail=str(sid)):
            continue
        sh = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": version}
        try:
            status, _, _, raw = post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, sh)
            R.check(f"{label}: notifications/initialized accepted (202)", status == 202,
                    f"HTTP {status}, body {short(raw)}")
            status, _, msgs, raw = post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}, sh)
            resp = response_for(msgs, 2)
            names = sorted(t.get("name") for t in (resp or {}).get("result", {}).get("tools", []))
            R.check(f"{label}: tools/list in session", status == 200 and names == sorted(TOOL_NAMES),
                    f"HTTP {status}, tools {names}, body {short(raw)}", detail=f"{len(names)} tools")
            status, _, msgs, raw = post(url, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
                "name": "index_status", "arguments": {}}}, sh)
            resp = response_for(msgs, 3)
            res = (resp or {}).get("result") or {}
            R.check(f"{label}: tools/call index_status in session",
                    status == 200 and not res.get("isError") and isinstance(res.get("structuredContent"), dict),
                    f"HTTP {status}, body {short(raw)}")
            # Informational: behaviour the spec asks for but these clients do not depend on.
            st, _, _, _ = post(url, {"jsonrpc": "2.0", "id": 4, "method": "tools/list"},
                               {"MCP-Protocol-Version": version})
            R.info(f"{label}: tools/list without Mcp-Session-Id -> HTTP {st} (spec: SHOULD be 400)")
            st, _, _, _ = post(url, {"jsonrpc": "2.0", "id": 5, "method": "tools/list"},
                               {"Mcp-Session-Id": "no-such-session", "MCP-Protocol-Version": version})
            R.info(f"{label}: tools/list with an unknown Mcp-Session-Id -> HTTP {st} (spec: 404)")
            st, _, _, _ = post(url, None, sh, method="DELETE")
            R.info(f"{label}: DELETE session -> HTTP {st} (200/204, or 405 if not supported)")
        except Exception as exc:
            R.fail(f"{label}: in-session requests", exc_text(exc))

    # DNS rebinding: a request whose Host/Origin is not localhost must get a 4xx.
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "rebind", "version": "0"}}}
    try:
        st, _, _, raw = post(url, init, {"Host": "evil.example.com", "Origin": "http://evil.example.com"})
        R.check("http-raw: foreign Host/Origin rejected (DNS rebinding)", 400 <= st < 500,
                f"HTTP {st}; a localhost server must validate Host or Origin", detail=f"HTTP {st}")
    except Exception as exc:
        R.fail("http-raw: foreign Host/Origin rejected (DNS rebinding)", exc_text(exc))


# --------------------------------------------------------------------------- Node clients

def node_tool(node_bin: Path | None, name: str, npm_spec: str) -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ)
    if node_bin:
        env["PATH"] = f"{node_bin}{os.pathsep}{env.get('PATH', '')}"
        wrapper = node_bin / name
        if wrapper.exists():
            return [str(wrapper)], env
    # Fallback: npx from the PATH (needs the package in npx's cache or a reachable registry).
    return ["npx", "--yes", npm_spec], env


def run_cmd(cmd: list[str], env: dict[str, str], timeout: float, cwd: Path | None = None) -> tuple[int, str, str]:
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL, cwd=cwd)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return 124, out, err + f"\n[timed out after {timeout:.0f}s]"


def parse_json_stdout(out: str) -> Any:
    out = out.strip()
    try:
        return json.loads(out)
    except json.JSONDecodeError:
        # Last JSON object on stdout.
        for line in reversed(out.splitlines()):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    return None


def node_ok(node_bin: Path | None) -> bool:
    """The Inspector needs Node >= 22.19 (undici 8); say so plainly instead of failing obscurely."""
    node = str(node_bin / "node") if node_bin else (shutil.which("node") or "node")
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
        major, minor = (int(x) for x in out.lstrip("v").split(".")[:2])
    except Exception as exc:
        R.fail("node: version >= 22.19", f"{node}: {exc_text(exc)}")
        return False
    return R.check("node: version >= 22.19", (major, minor) >= (22, 19),
                   f"{node} is {out}; pass --node-bin from .ci/install_mcp_clients.sh", detail=f"{node} {out}")


def inspector(node_bin: Path | None, ken: Path, repo: Path, url: str | None, work: Path) -> None:
    base, env = node_tool(node_bin, "inspector", "@modelcontextprotocol/inspector@2.12.0")
    home = work / "inspector-home"  # keeps ~/.mcp-inspector (catalog, secrets) out of the real home
    home.mkdir(exist_ok=True)
    env.update(HOME=str(home), MCP_CATALOG_PATH=str(home / "mcp.json"), CI="true")
    # (name, target, transport options); the target is the server command with its flags, or the URL.
    # The Inspector, like the SDK, starts a stdio server with a minimal environment; pass
    # KEN_*/KENNING_* settings on explicitly, as the SDK checks do.
    env_opts = [opt for k, v in server_env().items() for opt in ("-e", f"{k}={v}")]
    targets: list[tuple[str, list[str], list[str]]] = [
        ("stdio", [str(ken), "serve", "--mcp", "--repo", str(repo)], env_opts),
    ]
    if url:
        targets.append(("http", [url], ["--transport", "http"]))
    else:
        R.skip("inspector http", "no HTTP server")
    for tname, target, topts in targets:
        label = f"inspector {tname}"
        # Under --cli, everything before `--` is the target (server command and its flags),
        # everything after it is the Inspector's own options.
        code, out, err = run_cmd(base + ["--cli", *target, "--", *topts, "--method", "tools/list", "--format", "json"],
                                 env, 180)
        doc = parse_json_stdout(out)
        result = (doc or {}).get("result") or {}
        tools = result.get("tools") or []
        names = sorted(t.get("name") for t in tools)
        # The stdio target is a default server (core tools); the HTTP one runs --tools full.
        want = sorted(CORE_TOOL_NAMES if tname == "stdio" else TOOL_NAMES)
        R.check(f"{label}: tools/list", code == 0 and names == want,
                f"exit {code}, tools {names}\nstdout: {short(out)}\nstderr: {short(err[-1500:], 1500)}",
                detail=f"{len(names)} tools")
        if tname == "stdio":
            size = len(json.dumps(result, separators=(",", ":")))
            R.check(f"{label}: default tools/list within {CORE_TOOLS_LIST_MAX_CHARS} characters",
                    size <= CORE_TOOLS_LIST_MAX_CHARS, f"{size} characters", detail=f"{size} characters")
        strict = re.findall(r".*portab.*", err, flags=re.I)
        if strict:
            R.info(f"{label}: inspector schema portability note: {short(strict[0], 300)}")
        # --tool-arg values are strings, coerced by the Inspector using the tool's
        # inputSchema (integer/number -> Number, boolean -> true/false, object/array -> JSON).
        code, out, err = run_cmd(
            base + ["--cli", *target, "--", *topts, "--method", "tools/call", "--tool-name", "search",
                    "--tool-arg", "query=discount", "--tool-arg", "limit=3", "--format", "json"],
            env, 180)
        doc = parse_json_stdout(out)
        res = (doc or {}).get("result") or {}
        sc = res.get("structuredContent")
        R.check(f"{label}: tools/call search (--tool-arg query=discount limit=3)",
                code == 0 and not res.get("isError") and isinstance(sc, dict) and "generation" in sc,
                f"exit {code}\nstdout: {short(out)}\nstderr: {short(err[-1500:], 1500)}")
        code, out, err = run_cmd(
            base + ["--cli", *target, "--", *topts, "--method", "tools/call", "--tool-name", "read_span",
                    "--tool-args-json", json.dumps({"span": "shop/cart.py:1-10"}), "--format", "json"],
            env, 180)
        doc = parse_json_stdout(out)
        res = (doc or {}).get("result") or {}
        R.check(f"{label}: tools/call read_span (--tool-args-json)",
                code == 0 and not res.get("isError") and isinstance(res.get("structuredContent"), dict),
                f"exit {code}\nstdout: {short(out)}\nstderr: {short(err[-1500:], 1500)}")


def conformance(node_bin: Path | None, url: str | None, work: Path) -> None:
    if not url:
        R.skip("conformance", "no HTTP server")
        return
    base, env = node_tool(node_bin, "conformance", "@modelcontextprotocol/conformance@0.1.16")
    outdir = work / "conformance"
    outdir.mkdir(exist_ok=True)
    for scenario in CONFORMANCE_SCENARIOS:
        label = f"conformance {scenario}"
        sdir = outdir / scenario
        sdir.mkdir(exist_ok=True)
        code, out, err = run_cmd(base + ["server", "--url", url, "--scenario", scenario, "-o", str(sdir)],
                                 env, 180, cwd=work)
        checks: list[dict[str, Any]] = []
        for f in sorted(sdir.rglob("checks.json")):
            try:
                checks += json.loads(f.read_text())
            except Exception:
                pass
        bad = [c for c in checks if c.get("status") in ("FAILURE", "ERROR")]
        warn = [c for c in checks if c.get("status") == "WARNING"]
        detail = f"{len(checks)} checks" + (f", {len(warn)} warnings" if warn else "")
        why = "; ".join(f"{c.get('id')}: {c.get('errorMessage') or c.get('description')}" for c in bad) \
            or f"exit {code}\n{short(out[-1500:], 1500)}\n{short(err[-800:], 800)}"
        R.check(label, code == 0 and not bad and bool(checks), why, detail=detail)
        for c in warn:
            R.info(f"{label}: WARNING {c.get('id')}: {c.get('errorMessage') or c.get('details')}")


# --------------------------------------------------------------------------- main

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ken", required=True, type=Path, help="the ken binary")
    ap.add_argument("--fixture", required=True, type=Path, help="fixture repository to copy (fixtures/serve/shop)")
    ap.add_argument("--node-bin", type=Path, help="folder with node (>= 22.19), inspector and conformance")
    ap.add_argument("--skip-node", action="store_true", help="skip the Inspector and conformance checks")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (repo copy, server logs)")
    a = ap.parse_args()

    ken = a.ken.resolve()
    if not (ken.is_file() and os.access(ken, os.X_OK)):
        print(f"--ken {ken}: not an executable file", file=sys.stderr)
        return 2
    if not (a.fixture / "shop" / "cart.py").is_file():
        print(f"--fixture {a.fixture}: not the shop fixture", file=sys.stderr)
        return 2
    if not a.skip_node and a.node_bin and not (a.node_bin / "node").exists():
        print(f"--node-bin {a.node_bin}: no node there", file=sys.stderr)
        return 2

    work = Path(tempfile.mkdtemp(prefix="kenning-e2e-"))
    t_start = time.monotonic()
    server: HttpServer | None = None
    try:
        print(f"== fixture ({work})", flush=True)
        repo = materialize(a.fixture.resolve(), ken, work)
        if repo is not None:
            server = run_all(a, ken, repo, work)
    finally:
        if server:
            server.stop()
        print(f"elapsed {time.monotonic() - t_start:.1f}s", flush=True)
        if R.failed:
            for log in ("stdio-server.log", "http-server.log"):
                f = work / log
                if f.is_file() and f.stat().st_size:
                    lines = f.read_text(errors="replace").splitlines()[-30:]
                    print(f"--- last lines of {log}:\n" + "\n".join(lines), flush=True)
        if a.keep or R.failed:
            print(f"kept {work} (repo copy, stdio-server.log, http-server.log, conformance results)", flush=True)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return R.summary()


def run_all(a: argparse.Namespace, ken: Path, repo: Path, work: Path) -> HttpServer | None:
    """Every client section after the fixture; returns the HTTP server for the caller to stop."""
    server: HttpServer | None = None
    try:
        print("== Python SDK over stdio", flush=True)
        # Like real hosts, the SDK starts the server with a minimal environment (HOME, LOGNAME,
        # PATH, SHELL, TERM, USER); KEN_*/KENNING_* settings are passed through on top.
        stdio = StdioServerParameters(command=str(ken), args=["serve", "--mcp", "--tools", "full", "--repo", str(repo)],
                                      env=server_env() or None)
        stdio_log = open(work / "stdio-server.log", "a")
        def stdio_target() -> Any:
            return stdio_client(stdio, errlog=stdio_log)
        run_guarded("sdk-stdio: session", sdk_session("sdk-stdio", stdio_target, repo))
        run_guarded("sdk-stdio: mode=auto session", sdk_auto("sdk-stdio", stdio_target))
        stdio_log.close()

        print("== Python SDK over streamable HTTP", flush=True)
        server = HttpServer(ken, repo, work / "http-server.log")
        url = server.start()
        if url:
            run_guarded("sdk-http: session", sdk_session("sdk-http", lambda: url, repo))
            run_guarded("sdk-http: mode=auto session", sdk_auto("sdk-http", lambda: url))
            # The session's answers are counted: tokens given to the model, and of the files drawn from.
            status, _, _, raw = post(url.rsplit("/mcp", 1)[0] + "/metrics", None, method="GET")
            def sample(name: str) -> float:
                return sum(float(l.rsplit(" ", 1)[1]) for l in raw.splitlines()
                           if l.startswith(name + "{") and 'operation="search"' in l)
            returned, drawn = sample("ken_mcp_tokens_returned_total"), sample("ken_mcp_tokens_drawn_from_total")
            R.check("sdk-http: /metrics counts the tokens answers returned and drew from",
                    status == 200 and returned > 0 and drawn > 0,
                    f"HTTP {status}, returned {returned}, drawn {drawn}\n{short(raw, 600)}",
                    detail=f"search: {returned:.0f} returned, {drawn:.0f} drawn from")
            print("== raw HTTP", flush=True)
            raw_http(url)

        if a.skip_node:
            R.skip("inspector", "--skip-node")
            R.skip("conformance", "--skip-node")
        else:
            print("== MCP Inspector CLI", flush=True)
            if node_ok(a.node_bin):
                inspector(a.node_bin, ken, repo, url, work)
                print("== conformance suite", flush=True)
                conformance(a.node_bin, url, work)
    except BaseException:
        if server:
            server.stop()
        raise
    return server


if __name__ == "__main__":
    sys.exit(main())
