//! `use_skill`: loads one of the skills the prompt lists (`project/skills.rs`), in Cline's
//! words (`UseSkillToolHandler`, v4.0.10): its instructions, or why not.

use std::path::PathBuf;

#[cfg(feature = "skills")]
use super::{Call, Ctx, Outcome};
#[cfg(feature = "skills")]
use crate::run::prompt::skills;

/// One skill, as `project/skills.rs` found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Skill {
    /// Its name (its folder's).
    pub name: String,
    /// When it helps, as its frontmatter says.
    pub description: String,
    /// Its `SKILL.md`.
    pub path: PathBuf,
    /// Its instructions: the body after the frontmatter, trimmed.
    pub instructions: String,
}

#[cfg(feature = "skills")]
pub(super) fn run(call: &Call, ctx: &mut Ctx<'_>) -> Outcome {
    let Some(name) = call.param("skill_name") else {
        ctx.term.tool("use_skill", "");
        ctx.term.outcome(false, "no skill named");
        let text = "Error: Missing required parameter 'skill_name'. Please provide the name of the skill to activate.";
        return Outcome::Failure { text: text.to_string(), mistake: true };
    };
    ctx.term.tool("use_skill", name);
    // As Cline's handler: the skills as they are now (one written earlier in this reply
    // included), not only those listed with the request.
    ctx.memory.skills = (ctx.skills_now)(ctx.term);
    let offered = &ctx.memory.skills;
    if offered.is_empty() {
        ctx.term.outcome(false, "no skills");
        // Cline leaves the mistake count as it is here.
        let text = "Error: No skills are available. Skills may be disabled or not configured.";
        return Outcome::Failure { text: text.to_string(), mistake: false };
    }
    // From here on Cline counts the call a success, the name found or not.
    match offered.iter().find(|s| s.name == name) {
        Some(skill) => {
            ctx.term.outcome(true, &format!("skill {name} loaded"));
            Outcome::Success(skills::activated(&skill.name, &skill.instructions, &skill.path.to_string_lossy()))
        }
        None => {
            ctx.term.outcome(false, "no such skill");
            let names: Vec<&str> = offered.iter().map(|s| s.name.as_str()).collect();
            Outcome::Success(format!("Error: Skill \"{name}\" not found. Available skills: {}", names.join(", ")))
        }
    }
}
