"""What the stub LLM says: reply specs, default policy, and OpenAI wire formats.

A reply spec is a JSON-able dict, so tests can script it in-process or over HTTP:
`{"content": "hi"}`, `{"tool_calls": [{"name": "f", "arguments": {"x": 1}}]}`,
`{"status": 500}` (HTTP error), `{"raw": "not json"}` (malformed 200 body), plus optional
`"delay"` (seconds before answering) and `"finish_reason"`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

JSON = dict[str, Any]


def minimal_json(schema: JSON, defs: JSON | None = None) -> Any:
    """The smallest value that validates against a (simple) JSON schema."""
    defs = (
        defs if defs is not None else {**schema.get("$defs", {}), **schema.get("definitions", {})}
    )
    if "$ref" in schema:
        return minimal_json(defs.get(schema["$ref"].rsplit("/", 1)[-1], {}), defs)
    if "default" in schema:
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key, [])
        if any(o.get("type") == "null" for o in options):
            return None  # nullable (how strict mode spells optional): null is the minimum
        if options:
            return minimal_json(options[0], defs)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = "null" if "null" in kind else kind[0]
    if kind == "object":
        props = schema.get("properties", {})
        return {
            name: minimal_json(props.get(name, {}), defs) for name in schema.get("required", [])
        }
    if kind == "array":
        count = int(schema.get("minItems", 0))
        return [minimal_json(schema.get("items", {}), defs) for _ in range(count)]
    return {"string": "", "integer": 0, "number": 0, "boolean": False}.get(kind)


def as_spec(reply: JSON | str) -> JSON:
    """A reply spec from a script entry: a plain string means `{"content": s}`."""
    return {"content": reply} if isinstance(reply, str) else dict(reply)


def prompt_text(body: JSON) -> str:
    """All message contents of a recorded request, one per line (text parts of lists too)."""
    lines = []
    for message in body.get("messages", []):
        content = message.get("content") or ""
        if isinstance(content, list):
            content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        lines.append(f"{message.get('role')}: {content}")
    return "\n".join(lines)


def _forced_tool(body: JSON) -> JSON | None:
    """The tool the request forces (as `with_structured_output` does), if any."""
    tools = body.get("tools") or []
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        name = choice.get("function", {}).get("name")
        return next((t["function"] for t in tools if t["function"]["name"] == name), None)
    if choice in ("required", "any") and len(tools) == 1:
        function: JSON = tools[0]["function"]
        return function
    return None


def default_reply(body: JSON, n: int) -> JSON:
    """Policy when nothing is scripted: structured output gets minimal valid JSON, else text."""
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        schema = fmt.get("json_schema", {}).get("schema", {})
        return {"content": json.dumps(minimal_json(schema))}
    if fmt.get("type") == "json_object":
        return {"content": "{}"}
    tool = _forced_tool(body)
    if tool is not None:
        args = minimal_json(tool.get("parameters", {}))
        return {"tool_calls": [{"name": tool["name"], "arguments": args}]}
    return {"content": f"stub reply #{n}"}


def _tool_calls(spec: JSON, n: int) -> list[JSON]:
    calls = []
    for i, call in enumerate(spec.get("tool_calls") or []):
        args = call.get("arguments", {})
        calls.append({
            "id": call.get("id", f"call_stub_{n}_{i}"),
            "type": "function",
            "function": {"name": call["name"],
                         "arguments": args if isinstance(args, str) else json.dumps(args)},
        })  # fmt: skip
    return calls


def _count(text: str) -> int:
    return len(text.split())


def usage(body: JSON, spec: JSON) -> JSON:
    """Rough token counts (whitespace words) so usage metadata is present and plausible."""
    prompt = sum(_count(str(m.get("content") or "")) for m in body.get("messages", []))
    completion = _count(str(spec.get("content") or "")) + len(spec.get("tool_calls") or [])
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}  # fmt: skip


def _finish(spec: JSON) -> str:
    return str(spec.get("finish_reason") or ("tool_calls" if spec.get("tool_calls") else "stop"))


def completion(body: JSON, spec: JSON, n: int) -> JSON:
    """A non-streaming `chat.completion` object for `spec`."""
    message: JSON = {"role": "assistant", "content": spec.get("content"), "refusal": None}
    calls = _tool_calls(spec, n)
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-stub-{n}", "object": "chat.completion", "created": int(time.time()),
        "model": body.get("model", "stub-model"), "system_fingerprint": "stub",
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(spec),
                     "logprobs": None}],
        "usage": usage(body, spec),
    }  # fmt: skip


def stream_chunks(body: JSON, spec: JSON, n: int) -> Iterator[JSON]:
    """The `chat.completion.chunk` objects of a streamed answer (content split by words)."""
    base = {"id": f"chatcmpl-stub-{n}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": body.get("model", "stub-model")}  # fmt: skip

    def chunk(delta: JSON, finish: str | None = None) -> JSON:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    for piece in re.findall(r"\s*\S+", str(spec.get("content") or "")):
        yield chunk({"content": piece})
    for i, call in enumerate(_tool_calls(spec, n)):
        yield chunk({"tool_calls": [{"index": i, **call}]})
    yield chunk({}, _finish(spec))
    if (body.get("stream_options") or {}).get("include_usage"):
        yield {**base, "choices": [], "usage": usage(body, spec)}
