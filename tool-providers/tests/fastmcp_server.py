"""The official Python SDK's example server (FastMCP; `MCPServer` from mcp 2.x), over stdio."""
try:  # mcp >= 2
    from mcp.server.mcpserver import MCPServer as FastMCP
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # mcp 1.x
    from mcp.server.fastmcp import FastMCP
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


if __name__ == "__main__":
    mcp.run()
