"""An MCP server on the official Python SDK whose tool names native function calling cannot
carry: one with a dot (MCP allows it; the APIs' function names do not), one too long for 64
characters once prefixed, and one plain tool beside them. For agent-min's native MCP tests."""
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("names")

@mcp.tool(name="files.read")
def files_read() -> str:
    """Has a dot in its name."""
    return "dotted"

@mcp.tool(name="a_tool_name_that_is_long_enough_to_pass_sixty_four_with_prefix")
def long_name() -> str:
    """Too long once prefixed."""
    return "long"

@mcp.tool()
def plain() -> str:
    """An ordinary tool."""
    return "plain"

mcp.run(transport="stdio")
