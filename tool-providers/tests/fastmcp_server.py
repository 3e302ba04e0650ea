"""The official Python SDK's example server (FastMCP; `MCPServer` from mcp 2.x), over stdio."""
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
async def greet(ctx: Context) -> str:
    """Ask the user's name (an elicitation) and greet them"""
    answer = await ctx.elicit("What is your name?", schema=Name)
    if answer.action == "accept":
        return f"Hello, {answer.data.name}"
    return answer.action


if __name__ == "__main__":
    mcp.run()
