"""A toolhost tool component written in Python: `word_count`.

It implements the WIT world `plugin` of contract 0.3.0 (`wit/0.3/plugin.wit`,
which reuses 0.1.0's imports from `wit/plugin.wit` and 0.2.0's resources
from `wit/0.2/plugin.wit`) with componentize-py, exactly as a Rust component
does with toolhost-sdk: the class `Tools` below is the exported `tools`
interface (its result is the counts as JSON and a one-line summary as a
text block; `count_chosen` asks the user which count they want through
the host's `form` import), `Resources` offers one resource (a short guide to the tool),
`Prompts` and `Completion` offer nothing, and `wit_world.imports.log` is the
host's `log` import. The bindings (`wit_world`, `componentize_py_types`) are
generated from `wit/`, `wit/0.2/` and `wit/0.3/` at build time; see
README.md beside this file.

Build: `cargo xtask setup-python && cargo xtask build-plugins` writes
`target/components/python_wordcount.wasm`.
"""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import form, log
from wit_world.imports.toolhost_plugin_content_0_2_0 import (
    Body_Text,
    Completions,
    PromptDefinition,
    ResourceContents,
    ResourceDefinition,
    ResourceTemplate,
)
from wit_world.imports.toolhost_plugin_content_0_3_0 import (
    Block_Text,
    PromptResult,
    ToolOutput,
)
from wit_world.imports.types import (
    Annotations,
    ErrorCode,
    ToolDefinition,
    ToolError,
)

NAME = "word_count"

CHOSEN = "count_chosen"

# The form `count_chosen` asks (MCP's elicitation subset): one choice, with
# titles and a default. The host checks the answer against it before this
# code sees it.
UNIT_FORM = {
    "type": "object",
    "properties": {
        "unit": {
            "type": "string",
            "title": "Count",
            "oneOf": [
                {"const": "words", "title": "Words"},
                {"const": "characters", "title": "Characters"},
                {"const": "lines", "title": "Lines"},
            ],
            "default": "words",
        }
    },
    "required": ["unit"],
}

CHOSEN_OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string"},
        "unit": {"type": ["string", "null"]},
        "count": {"type": ["integer", "null"]},
    },
    "required": ["answer", "unit", "count"],
    "additionalProperties": False,
}

GUIDE_URI = "wordcount://guide"

GUIDE = """# word_count

Counts the words, characters and lines of a text exactly, so a model does
not have to estimate them.

- words: runs of non-whitespace characters;
- characters: Unicode code points, whitespace included;
- lines: separated by a line feed; a final line feed starts no new line.

Pass the text itself: `{"text": "one two three"}`. An empty text is refused.
"""

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "text": {
            "type": "string",
            "description": "The text to measure: any Unicode text, with lines "
            "separated by line feeds. Must not be empty.",
            "examples": ["The quick brown fox\njumps over the lazy dog."],
        }
    },
    "required": ["text"],
    "additionalProperties": False,
}

OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "words": {
            "type": "integer",
            "minimum": 0,
            "description": "Runs of non-whitespace characters.",
        },
        "characters": {
            "type": "integer",
            "minimum": 1,
            "description": "Unicode code points, whitespace included "
            "(not bytes, not UTF-16 units).",
        },
        "lines": {
            "type": "integer",
            "minimum": 1,
            "description": "Lines separated by a line feed; a final line "
            "feed does not start another line.",
        },
    },
    "required": ["words", "characters", "lines"],
    "additionalProperties": False,
}


def count(text: str) -> dict:
    """Words, characters and lines of a non-empty `text`."""
    lines = text.count("\n")
    if not text.endswith("\n"):
        lines += 1
    return {
        "words": len(text.split()),
        "characters": len(text),
        "lines": lines,
    }


class Tools(exports.Tools):
    """The exported `tools` interface."""

    def list(self) -> list[ToolDefinition]:
        return [
            ToolDefinition(
                name=NAME,
                title="Count Words",
                description="Count the words, characters and lines in a text. "
                "Use it when you need exact counts, e.g. to check a draft "
                "against a length limit; it reads nothing but its argument "
                "and has no side effects.",
                input_schema=json.dumps(INPUT_SCHEMA),
                output_schema=json.dumps(OUTPUT_SCHEMA),
                annotations=Annotations(
                    read_only=True,
                    destructive=False,
                    idempotent=True,
                    open_world=False,
                ),
            ),
            ToolDefinition(
                name=CHOSEN,
                title="Count What the User Chooses",
                description="Ask the user whether they want the words, characters "
                "or lines of a text counted, and count that. Use it when the user "
                "has not said which count they need.",
                input_schema=json.dumps(INPUT_SCHEMA),
                output_schema=json.dumps(CHOSEN_OUTPUT_SCHEMA),
                annotations=Annotations(
                    read_only=True,
                    destructive=False,
                    idempotent=False,
                    open_world=False,
                ),
            ),
        ]

    def call(self, name: str, arguments: str) -> ToolOutput:
        if name == CHOSEN:
            return count_chosen(json.loads(arguments)["text"])
        if name != NAME:
            # The host only calls tools that `list` returned.
            raise Err(
                ToolError(
                    code=ErrorCode.INTERNAL,
                    message=f"this component has no tool named {name!r}",
                    hint=None,
                    retry_after_ms=None,
                )
            )
        # The host validated `arguments` against INPUT_SCHEMA: `text` is a string.
        text = json.loads(arguments)["text"]
        if text == "":
            log.write(log.Level.DEBUG, "refused an empty text")
            raise Err(
                ToolError(
                    code=ErrorCode.VALIDATION_ERROR,
                    message="`text` is empty: there is nothing to count",
                    hint='pass the text itself, e.g. {"text": "one two three"}',
                    retry_after_ms=None,
                )
            )
        counts = count(text)
        log.write(
            log.Level.INFO,
            f"counted {counts['words']} words, {counts['characters']} characters, "
            f"{counts['lines']} lines",
        )
        summary = (
            f"{counts['words']} words, {counts['characters']} characters, "
            f"{counts['lines']} lines"
        )
        return ToolOutput(structured=json.dumps(counts), content=[Block_Text(summary)])


def count_chosen(text: str) -> ToolOutput:
    """Asks which count the user wants, then counts it. An answer is a
    choice, never a yes to a change: this tool changes nothing."""
    answer = form.ask("Which count of the text do you want?", json.dumps(UNIT_FORM))
    if isinstance(answer, form.Answer_Accepted):
        unit = json.loads(answer.value)["unit"]
        result = {"answer": "accepted", "unit": unit, "count": count(text)[unit]}
    else:
        # Declined, cancelled, or a client that cannot show a form.
        outcome = type(answer).__name__.removeprefix("Answer_").lower()
        result = {"answer": outcome, "unit": None, "count": None}
    return ToolOutput(structured=json.dumps(result), content=[])


class Resources(exports.Resources):
    """The exported `resources` interface: one fixed resource, no templates."""

    def list(self) -> list[ResourceDefinition]:
        return [
            ResourceDefinition(
                uri=GUIDE_URI,
                name="guide",
                title="How word_count counts",
                description="What word_count counts as a word, a character "
                "and a line, and how to call it.",
                mime_type="text/markdown",
                size=len(GUIDE.encode()),
                annotations=None,
            )
        ]

    def templates(self) -> list[ResourceTemplate]:
        return []

    def read(self, uri: str, variables: list[tuple[str, str]]) -> list[ResourceContents]:
        if uri != GUIDE_URI:
            # The host only reads the URIs `list` returned.
            raise Err(
                ToolError(
                    code=ErrorCode.NOT_FOUND,
                    message=f"this component has no resource {uri!r}",
                    hint=None,
                    retry_after_ms=None,
                )
            )
        return [ResourceContents(uri=uri, mime_type="text/markdown", body=Body_Text(GUIDE))]


class Prompts(exports.Prompts):
    """The exported `prompts` interface: this component offers none."""

    def list(self) -> list[PromptDefinition]:
        return []

    def get(self, name: str, arguments: list[tuple[str, str]]) -> PromptResult:
        raise Err(
            ToolError(
                code=ErrorCode.NOT_FOUND,
                message=f"this component has no prompt {name!r}",
                hint=None,
                retry_after_ms=None,
            )
        )


class Completion(exports.Completion):
    """The exported `completion` interface: nothing is marked completable."""

    def complete(self, target, argument: str, value: str, context) -> Completions:
        return Completions(values=[], total=None, has_more=False)
