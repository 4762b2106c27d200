//! The system prompt as a dialect starts from: Cline's template for the model's family
//! (`prompt/system.rs`) with the declared tools' sections (`tools/registry.rs`) and this
//! machine filled in. It lives here, above both, because the tools' own texts come from
//! `prompt/`.

use crate::run::prompt::system::{Env, Family};

/// The prompt of `family` with `env` filled in; its `# Tools` are the sections of the tools
/// declared in `tools/registry.rs`, in order.
pub fn render(family: Family, env: &Env<'_>) -> String {
    crate::run::prompt::system::template(family)
        .replace("{{tools}}", &crate::run::tools::registry::prompt_sections(family))
        .replace("{{cwd}}", env.cwd)
        .replace("{{os}}", env.os)
        .replace("{{ide}}", env.ide)
        .replace("{{shell}}", env.shell)
        .replace("{{home}}", env.home)
}

/// The system prompt for this run: the model's family, this machine, workspace `cwd`, and
/// whether several tools may be called per reply.
pub(crate) fn system(provider: &str, model: &str, cwd: &str, parallel_tool_calls: bool) -> String {
    let os = match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "macOS",
        other => other,
    };
    let home = std::env::var("HOME").unwrap_or_default();
    render(
        crate::run::prompt::system::family(provider, model),
        &Env { cwd, os, ide: "agent-min (terminal)", shell: "/bin/sh", home: &home, parallel_tool_calls },
    )
}
