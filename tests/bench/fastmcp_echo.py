"""The benchmark's peer: the `echo` tool served by Python FastMCP over stdio.

Same contract as the `echo` component and the `native-echo` binary: a
read-only tool that returns its input object, `{"message": str}`.
Started by `toolhost-bench` with the interpreter of the virtual environment
`cargo xtask bench` makes under target/bench/venv.
"""

from fastmcp import FastMCP
from pydantic import BaseModel


class Echoed(BaseModel):
    """What `echo` returns: the message it was given."""

    message: str


mcp = FastMCP("fastmcp-echo")


@mcp.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
def echo(message: str) -> Echoed:
    """Return the input unchanged."""
    return Echoed(message=message)


if __name__ == "__main__":
    mcp.run(transport="stdio", show_banner=False)
