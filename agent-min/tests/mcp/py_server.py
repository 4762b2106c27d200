"""An MCP server on the official Python SDK (FastMCP), for agent-min's tests.

Tools that sleep, crash mid-call, print garbage on stdout, raise, add a tool (with
notifications/tools/list_changed), log (notifications/message), and a tools/list paginated
two tools a page.
`python py_server.py [stdio|streamable-http|streamable-http-json|sse] [PORT]`; with $PIDFILE set, appends its pid there.
"""
import os, sys

import anyio
import mcp.types as types
from mcp.server.fastmcp import Context, FastMCP

port = int(sys.argv[2]) if len(sys.argv) > 2 else 8000
transport = sys.argv[1] if len(sys.argv) > 1 else "stdio"
# "streamable-http-json": answers as plain JSON bodies instead of SSE streams.
json_response = transport == "streamable-http-json"
mcp = FastMCP("py", host="127.0.0.1", port=port, json_response=json_response)
if os.environ.get("PIDFILE"):
    with open(os.environ["PIDFILE"], "a") as f:
        f.write(f"{os.getpid()}\n")

@mcp.tool()
async def slow(seconds: float) -> str:
    """Sleeps, then answers (with $PIDFILE set, first appends "slow" to $PIDFILE.calls, and
    "cancelled" when the client's notifications/cancelled stops it)."""
    if os.environ.get("PIDFILE"):
        with open(os.environ["PIDFILE"] + ".calls", "a") as f:
            f.write("slow\n")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        if os.environ.get("PIDFILE"):
            with open(os.environ["PIDFILE"] + ".calls", "a") as f:
                f.write("cancelled\n")
        raise
    return "slept"

@mcp.tool()
def crash() -> str:
    """Exits in the middle of the call."""
    sys.stderr.write("py server: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)

@mcp.tool()
def garbage() -> str:
    """Prints lines that are not JSON-RPC on stdout, then answers."""
    os.write(1, b"this is not json\n{\"half\": \n\x1b[31mred\n")
    return "answered after garbage"

@mcp.tool()
def fail() -> str:
    """Raises."""
    raise ValueError("the tool failed on purpose")

@mcp.tool()
def zz_last_page(x: int) -> str:
    """Only on a later page of tools/list."""
    return f"last page {x}"

@mcp.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `grown`, then sends notifications/tools/list_changed."""
    def grown() -> str:
        """Appeared after list_changed."""
        return "grown"
    mcp.add_tool(grown)
    await ctx.session.send_tool_list_changed()
    return "grew"

@mcp.tool()
async def log(ctx: Context) -> str:
    """Sends two log messages (notifications/message), then answers."""
    await ctx.session.send_log_message(level="warning", data="half way", logger="steps")
    await ctx.session.send_log_message(level="info", data={"done": 2})
    return "logged"

async def paged_tools(req):
    tools = await mcp.list_tools()
    if req is None:  # the SDK's own lookup of a tool's definition: everything, unpaged
        return types.ServerResult(types.ListToolsResult(tools=tools))
    page = int((req.params.cursor if req.params else None) or 0)
    nxt = str(page + 1) if (page + 1) * 2 < len(tools) else None
    return types.ServerResult(types.ListToolsResult(tools=tools[page * 2:(page + 1) * 2], nextCursor=nxt))

mcp._mcp_server.request_handlers[types.ListToolsRequest] = paged_tools
mcp.run(transport="streamable-http" if json_response else transport)
