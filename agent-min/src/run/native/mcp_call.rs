//! A native call of an MCP server's tool (`uid0mcp0tool`, defined by `mcp/native.rs`) read as
//! the `use_mcp_tool` call the XML dialect makes, as Cline's `StreamResponseHandler` and
//! `ToolExecutorCoordinator` do: `server_name` is the server the uid stands for, `tool_name`
//! what follows the identifier, `arguments` the JSON of the call's input. Approval,
//! `autoApprove`, events and results are then the XML path's.
//!
//! Cline splits the name at every identifier and keeps the second piece, which would cut a tool
//! named `a0mcp0b` to `a`; here the name is split at the first identifier only, so the tool
//! called is the one defined.

use serde_json::Value;

use crate::run::mcp::native::{server_by_key, IDENTIFIER};
use crate::run::tools::Call;

/// `use_mcp_tool`'s three parameters for a call of `name` with `arguments` (a JSON object's
/// text); `None` when `name` is not an MCP tool's.
pub(crate) fn params(name: &str, arguments: &str) -> Option<Vec<(String, String)>> {
    let (key, tool) = name.split_once(IDENTIFIER)?;
    // Compact, as Cline's `JSON.stringify(input)`; no arguments at all are `{}`.
    let args = match serde_json::from_str::<Value>(arguments) {
        Ok(v) => v.to_string(),
        Err(_) if arguments.trim().is_empty() => "{}".to_string(),
        Err(_) => arguments.to_string(),
    };
    Some(vec![
        ("server_name".to_string(), server_by_key(key)),
        ("tool_name".to_string(), tool.to_string()),
        ("arguments".to_string(), args),
    ])
}

/// The tool a native call of `name` is, in Cline's texts: `use_mcp_tool` for an MCP tool's
/// function (Cline names the block so), else `name`.
pub(crate) fn tool_name(name: &str) -> &str {
    if name.contains(IDENTIFIER) {
        "use_mcp_tool"
    } else {
        name
    }
}

/// The `use_mcp_tool` call for a native call of `name`, if it is an MCP tool's.
pub(crate) fn to_call(name: &str, arguments: &str) -> Option<Call> {
    let params = params(name, arguments)?;
    Some(Call {
        name: "use_mcp_tool".to_string(),
        params: params.into_iter().map(|(k, v)| (k, v.clone(), v)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::mcp::native::server_key;

    #[test]
    fn an_mcp_function_name_becomes_use_mcp_tool() {
        let uid = server_key("mcp-call-test-server");
        let c = to_call(&format!("{uid}0mcp0get-sum"), r#"{ "a": 2, "b": {"c": [1]} }"#).unwrap();
        assert_eq!(c.name, "use_mcp_tool");
        assert_eq!(c.param("server_name"), Some("mcp-call-test-server"));
        assert_eq!(c.param("tool_name"), Some("get-sum"));
        assert_eq!(c.param("arguments"), Some(r#"{"a":2,"b":{"c":[1]}}"#));
        let empty = to_call(&format!("{uid}0mcp0a0mcp0b"), "").unwrap();
        assert_eq!((empty.param("tool_name"), empty.param("arguments")), (Some("a0mcp0b"), Some("{}")));
        assert!(to_call("read_file", "{}").is_none());
        assert_eq!((tool_name(&format!("{uid}0mcp0echo")), tool_name("read_file")), ("use_mcp_tool", "read_file"));
    }
}
