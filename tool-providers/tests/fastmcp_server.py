"""The official Python SDK's example server (FastMCP; `MCPServer` from mcp 2.x), over stdio.

With `--only-2025-11-25` it does not know `server/discover` (answered "method not found"), as a
server of MCP 2025-11-25 and earlier: clients reach it with `initialize`. (The SDK still takes the
connection for a 2026-07-28 one after that request and refuses `initialize` on it, which a real
older server would not: a client must start such a server again for its `initialize`.)
"""
import sys

from pydantic import BaseModel

try:  # mcp >= 2
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver import MCPServer as FastMCP
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import Context, FastMCP
    from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import ToolAnnotations

mcp = FastMCP("Demo")


@mcp.tool(annotations=ToolAnnotations(readOnlyHint=True), meta={"origin": "fastmcp"})
def add(a: int, b: int) -> int:
    """Add two numbers"""
    return a + b


@mcp.tool()
def shout(text: str) -> str:
    """Upper-case the text"""
    if not text:
        raise ToolError("nothing to shout")
    return text.upper()


class Name(BaseModel):
    name: str = "World"


@mcp.tool()
async def greet(ctx: Context):
    """Ask the user's name (an elicitation) and greet them"""
    if getattr(ctx, "protocol_version", None) == "2026-07-28":
        # MCP 2026-07-28 has no server-to-client request: the question is an input-required
        # result (SEP-2322), the answer comes with the call sent again.
        from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

        answer = (ctx.input_responses or {}).get("name")
        if answer is None:
            schema = Name.model_json_schema()
            question = ElicitRequestFormParams(message="What is your name?", requested_schema=schema)
            return InputRequiredResult(input_requests={"name": ElicitRequest(params=question)})
        if answer.action == "accept":
            return f"Hello, {(answer.content or {}).get('name', 'World')}"
        return answer.action
    answer = await ctx.elicit("What is your name?", schema=Name)
    if answer.action == "accept":
        return f"Hello, {answer.data.name}"
    return answer.action


if __name__ == "__main__":
    if "--only-2025-11-25" in sys.argv:
        lowlevel = getattr(mcp, "_lowlevel_server", None) or getattr(mcp, "_mcp_server", None)
        handlers = getattr(lowlevel, "_request_handlers", {})
        handlers.pop("server/discover", None)
    mcp.run()
