#!/usr/bin/env python3
"""Checks ask-user's provider exports with the providers' own SDKs
(crates/conformance/tests/suite/sdk.rs).

Reads a JSON array of checks on stdin and prints a JSON array with, for each, the list of
problems found (empty when the check passes):

- {"kind": "export", "format": NAME, "export": {...}}: the export of `ask-user schema
  --format NAME`, validated with the type its provider's SDK publishes for it:
  * openai-chat, openai-chat-strict, deepseek-strict: openai's ChatCompletionFunctionToolParam
    (DeepSeek's API is OpenAI-compatible and publishes no SDK of its own);
  * openai-responses, openai-responses-strict: openai's FunctionToolParam (Responses API);
  * anthropic, anthropic-strict: anthropic's ToolParam;
  * gemini: google-genai's FunctionDeclaration, and a round trip that drops nothing;
  * mcp: mcp's Tool, and a round trip that drops nothing;
  * canonical: {"name","description","parameters"}.
  TypedDict params are validated with pydantic and, beyond that, refuse keys the TypedDict
  does not declare (pydantic ignores them). Strict exports must also be a fixed point of
  the SDK's own strict-schema transform (openai.lib._pydantic._ensure_strict_json_schema,
  anthropic.lib._parse._transform.transform_schema): a transform that would change the
  schema means the provider's strict mode reads it differently. Every JSON Schema (all but
  Gemini's OpenAPI dialect) must be a valid Draft 2020-12 schema.
- {"kind": "instance", "schema": {...}, "instance": {...}}: `instance` validated against
  `schema` with jsonschema (Draft 2020-12).

Run with the venv of scripts/setup: .venv/bin/python tools/check_exports.py. Versions are
pinned in tools/requirements.txt.
"""
import copy
import json
import sys
import typing

import jsonschema
import pydantic
import typing_extensions
from anthropic.lib._parse._transform import transform_schema
from anthropic.types import ToolParam
from google.genai import types as genai
from mcp import types as mcp
from openai.lib._pydantic import _ensure_strict_json_schema
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam


def pydantic_errors(error):
    return [
        ".".join(str(part) for part in e["loc"]) + ": " + e["msg"] for e in error.errors()
    ]


def unknown_keys(typed_dict, value, path):
    """Keys of `value` that `typed_dict` (recursively) does not declare, unless the SDK lets
    it carry more (pydantic config `extra: allow`, as Anthropic's input schema does)."""
    if not isinstance(value, dict):
        return []
    if getattr(typed_dict, "__pydantic_config__", {}).get("extra") == "allow":
        return []
    hints = typing.get_type_hints(typed_dict)
    problems = []
    for key, item in value.items():
        if key not in hints:
            problems.append(f"{path}{key}: not a field of {typed_dict.__name__}")
            continue
        hint = hints[key]
        for candidate in (hint, *typing.get_args(hint)):
            if typing_extensions.is_typeddict(candidate):
                problems += unknown_keys(candidate, item, f"{path}{key}.")
                break
    return problems


def typed_dict_problems(typed_dict, value):
    try:
        pydantic.TypeAdapter(typed_dict).validate_python(value, strict=True)
        problems = []
    except pydantic.ValidationError as error:
        problems = pydantic_errors(error)
    return problems + unknown_keys(typed_dict, value, "")


def schema_problems(schema, path):
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
        return []
    except jsonschema.SchemaError as error:
        return [f"{path}: not a Draft 2020-12 schema: {error.message}"]


def round_trip_problems(model, value):
    try:
        parsed = model.model_validate(value)
    except pydantic.ValidationError as error:
        return pydantic_errors(error)
    back = parsed.model_dump(mode="json", exclude_none=True, by_alias=True)
    if back != value:
        return [f"{model.__name__} round trip changes the export: {json.dumps(back)}"]
    return []


def openai_strict_problems(parameters):
    transformed = copy.deepcopy(parameters)
    transformed = _ensure_strict_json_schema(transformed, path=(), root=transformed)
    if transformed != parameters:
        return ["the OpenAI SDK's strict transform changes the schema: " + json.dumps(transformed)]
    return []


def anthropic_strict_problems(schema):
    try:
        transformed = transform_schema(copy.deepcopy(schema))
    except Exception as error:  # the transform asserts on what it cannot express
        return [f"the Anthropic SDK's strict transform refuses the schema: {error!r}"]
    if transformed != schema:
        return ["the Anthropic SDK's strict transform changes the schema: " + json.dumps(transformed)]
    return []


def export_problems(name, export):
    strict = name.endswith("-strict")
    if name in ("openai-chat", "openai-chat-strict", "deepseek-strict"):
        problems = typed_dict_problems(ChatCompletionFunctionToolParam, export)
        parameters = export.get("function", {}).get("parameters", {})
        problems += schema_problems(parameters, "function.parameters")
        if strict:
            problems += openai_strict_problems(parameters)
            if export.get("function", {}).get("strict") is not True:
                problems.append("function.strict: not true")
        return problems
    if name in ("openai-responses", "openai-responses-strict"):
        problems = typed_dict_problems(FunctionToolParam, export)
        parameters = export.get("parameters") or {}
        problems += schema_problems(parameters, "parameters")
        if strict:
            problems += openai_strict_problems(parameters)
        if export.get("strict") is not strict:
            problems.append(f"strict: not {str(strict).lower()}")
        return problems
    if name in ("anthropic", "anthropic-strict"):
        problems = typed_dict_problems(ToolParam, export)
        schema = export.get("input_schema", {})
        problems += schema_problems(schema, "input_schema")
        if strict:
            problems += anthropic_strict_problems(schema)
            if export.get("strict") is not True:
                problems.append("strict: not true")
        return problems
    if name == "gemini":
        return round_trip_problems(genai.FunctionDeclaration, export)
    if name == "mcp":
        problems = round_trip_problems(mcp.Tool, export)
        problems += schema_problems(export.get("inputSchema", {}), "inputSchema")
        problems += schema_problems(export.get("outputSchema", {}), "outputSchema")
        return problems
    if name == "canonical":
        problems = []
        if sorted(export) != ["description", "name", "parameters"]:
            problems.append(f"keys {sorted(export)}")
        return problems + schema_problems(export.get("parameters", {}), "parameters")
    return [f"no check for format {name}"]


def instance_problems(schema, instance):
    validator = jsonschema.Draft202012Validator(schema)
    return sorted(
        "/".join(str(p) for p in error.absolute_path) + ": " + error.message
        for error in validator.iter_errors(instance)
    )


def check(item):
    if item["kind"] == "export":
        return export_problems(item["format"], item["export"])
    if item["kind"] == "instance":
        return instance_problems(item["schema"], item["instance"])
    return [f"unknown kind {item['kind']}"]


json.dump([check(item) for item in json.load(sys.stdin)], sys.stdout)
