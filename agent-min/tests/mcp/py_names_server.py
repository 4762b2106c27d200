"""An MCP server on the official Python SDK whose tool names native function calling cannot
carry: one with a dot (MCP allows it; the APIs' function names do not), one too long for 64
characters once prefixed, and one plain tool beside them. For agent-min's native MCP tests.
With $LIST_TOOLS_AT set, tools/list answers that many seconds after the server started."""
import os, time

import anyio
from mcp.server.fastmcp import FastMCP

START = time.monotonic()

class Names(FastMCP):
    async def list_tools(self):
        at = os.environ.get("LIST_TOOLS_AT")
        if at:
            await anyio.sleep(max(0.0, START + float(at) - time.monotonic()))
        return await super().list_tools()

mcp = Names("names")

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
