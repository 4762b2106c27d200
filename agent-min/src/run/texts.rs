//! The long texts built in — Cline's system prompts, the tools' declarations, the model facts,
//! the commands' `--help` — deflated by `build.rs` (142 KB as 28 KB of the binary) and inflated
//! all at once, the first time one is asked for (well under a millisecond; the whole is kept
//! for the process's life).
//! Each text is a constant named after its file (`READ_FILE_JSON` for
//! `src/run/tools/decl/read_file.json`), so a missing one fails the build, not a run.

use std::sync::OnceLock;

/// One text: its range of the inflated whole.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Text {
    start: usize,
    end: usize,
}

include!(concat!(env!("OUT_DIR"), "/texts.rs"));

static DEFLATED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/texts.deflate"));

impl Text {
    /// The text.
    pub(crate) fn get(self) -> &'static str {
        &whole()[self.start..self.end]
    }
}

fn whole() -> &'static str {
    static WHOLE: OnceLock<String> = OnceLock::new();
    WHOLE.get_or_init(|| {
        let bytes = miniz_oxide::inflate::decompress_to_vec_with_limit(DEFLATED, WHOLE_LEN)
            .expect("build.rs deflated the texts");
        String::from_utf8(bytes).expect("build.rs read the texts as UTF-8")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each text is its file, whole (build.rs names the ranges; a range off by a byte would cut
    /// a neighbour's).
    #[test]
    fn each_text_is_its_file() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
        for (text, file) in [
            (GENERIC_TXT, "src/run/prompt/system/generic.txt"),
            (NATIVE_GPT_5_1_TXT, "src/run/prompt/system/native_gpt_5_1.txt"),
            (GPT_5_PATCH, "src/run/prompt/system/gpt_5.patch"),
            (APPLY_PATCH_JSON, "src/run/tools/decl/apply_patch.json"),
            (WRITE_TO_FILE_TXT, "src/run/tools/decl/write_to_file.txt"),
            (MODELS_JSON, "data/models.json"),
        ] {
            assert_eq!(text.get(), read(file), "{file}");
        }
        assert_eq!(whole().len(), WHOLE_LEN);
    }
}
