//! `read_file` of an image, end to end: the real binary reads a real PNG the test writes, and
//! the next request carries it in each wire's own shape (the scripted server refuses the shapes
//! the real APIs refuse: an image in a `tool` message, an `image_url` object on the Responses
//! API, bytes of another type than the one stated); Cline's refusals; the saved task.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::native::{self, call, decode_base64, AnthropicReply};
use common::*;
use serde_json::{json, Value};

const LIMIT: Duration = Duration::from_secs(60);

/// A real 2×1 transparent PNG (zlib-compressed IDAT, correct CRCs), as Python's `zlib` writes it.
const PNG: [u8; 68] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x02, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0xf4, 0x22, 0x7f, 0x8a, 0x00, 0x00, 0x00, 0x0b, 0x49,
    0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0x60, 0x80, 0x02, 0x00, 0x00, 0x09, 0x00, 0x01, 0x68, 0xf6, 0xcf, 0x4e, 0x00,
    0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A real 8000×1 PNG: wider than Cline's 7500 pixels.
const WIDE_PNG: [u8; 110] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x1f,
    0x40, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x53, 0x63, 0x98, 0x1a, 0x00, 0x00, 0x00, 0x35, 0x49,
    0x44, 0x41, 0x54, 0x78, 0xda, 0xed, 0xc1, 0x31, 0x01, 0x00, 0x00, 0x00, 0xc2, 0xa0, 0xf5, 0x4f, 0xed, 0x63, 0x0c,
    0xa0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x6e, 0x7d, 0x01, 0x00, 0x01, 0x92,
    0x7a, 0x28, 0x4a, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

const RESULT: &str = "[read_file for 'pixel.png'] Result:\nSuccessfully read image";

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("pixel.png"), PNG).unwrap();
    ws
}

/// The bytes a base64 text stands for (the scripted server's own strict decoder).
fn bytes_of(data: &Value) -> Vec<u8> {
    decode_base64(data.as_str().expect("base64 text")).expect("valid base64")
}

/// The bytes of a `data:image/png;base64,…` URL.
fn bytes_of_url(url: &Value) -> Vec<u8> {
    let rest = url.as_str().unwrap().strip_prefix("data:image/png;base64,").expect("a PNG data URL");
    decode_base64(rest).unwrap()
}

fn completes(calls: Vec<native::Call<'_>>) -> Resp {
    native::anthropic(AnthropicReply { calls, ..Default::default() }, 7)
}

fn run(ws: &Path, base: &[&str], extra: &[&str]) -> Run {
    let mut args = base.to_vec();
    args.extend_from_slice(extra);
    run_agent(ws, &args, &[("ANTHROPIC_API_KEY", KEY), ("OPENAI_API_KEY", KEY)], LIMIT)
}

#[test]
fn a_claude_4_model_gets_the_image_after_the_tool_result_in_the_same_message() {
    let ws = workspace();
    let server = Server::start(vec![
        completes(vec![call("toolu_1", "read_file", &[r#"{"path":"pix"#, r#"el.png"}"#])]),
        completes(vec![call("toolu_2", "attempt_completion", &[r#"{"result":"seen"}"#])]),
    ]);
    let url = server.anthropic_url();
    let base = ["--provider", "anthropic", "--base-url", &url, "--model", "claude-sonnet-4-5", "--yolo"];
    let r = run(ws.path(), &base, &["--no-save", "--json", "look at pixel.png"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    // No base64 on the terminal or in the events: the file's bytes as base64 start so.
    assert!(!r.all().contains("iVBORw0KGgo"), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    let last = msgs.last().unwrap()["content"].as_array().unwrap();
    assert_eq!(last[0]["type"], "tool_result");
    assert_eq!(last[0]["tool_use_id"], "toolu_1");
    assert_eq!(last[0]["content"], RESULT);
    assert_eq!(last[1]["type"], "image");
    assert_eq!(last[1]["source"]["type"], "base64");
    assert_eq!(last[1]["source"]["media_type"], "image/png");
    assert_eq!(bytes_of(&last[1]["source"]["data"]), PNG);
    // Then Cline's focus chain reminder and the environment details, each a block.
    assert!(last[2]["text"].as_str().unwrap().starts_with("\n# task_progress RECOMMENDED\n"));
    assert!(last[3]["text"].as_str().unwrap().starts_with("<environment_details>"));
    assert_eq!(last.len(), 4);
}

#[test]
fn chat_completions_gets_the_result_as_a_tool_message_then_the_image_in_a_user_message() {
    let ws = workspace();
    let server = Server::start(vec![
        native::openai("", "", &[call("call_1", "read_file", &[r#"{"path":"pixel.png"}"#])], 5),
        native::openai("", "", &[call("call_2", "attempt_completion", &[r#"{"result":"seen"}"#])], 5),
    ]);
    let url = server.openai_url();
    let base = ["--provider", "openai", "--base-url", &url, "--model", "gpt-4o", "--tool-calls", "native", "--yolo"];
    let r = run(ws.path(), &base, &["--no-save", "look"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    let n = msgs.len();
    assert_eq!(msgs[n - 2], json!({"role": "tool", "tool_call_id": "call_1", "content": RESULT}));
    let user = msgs[n - 1]["content"].as_array().unwrap();
    assert_eq!(user[0]["type"], "image_url");
    assert_eq!(bytes_of_url(&user[0]["image_url"]["url"]), PNG);
    assert_eq!(user[1]["type"], "text");
}

#[test]
fn the_responses_api_gets_an_input_image_after_the_function_call_output() {
    let ws = workspace();
    let server = Server::start(vec![
        native::responses("", "", &[call("call_1", "read_file", &[r#"{"path":"pixel.png"}"#])], 5),
        native::responses("", "", &[call("call_2", "attempt_completion", &[r#"{"result":"seen"}"#])], 5),
    ]);
    let url = server.openai_url();
    let base = ["--provider", "openai-native", "--base-url", &url, "--model", "gpt-5.5", "--yolo"];
    let r = run(ws.path(), &base, &["--no-save", "look"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert!(reqs.iter().all(|q| q.path == "/v1/responses"));
    let input = reqs[1].body["input"].as_array().unwrap();
    let n = input.len();
    assert_eq!(input[n - 2], json!({"type": "function_call_output", "call_id": "call_1", "output": RESULT}));
    let user = &input[n - 1];
    assert_eq!(user["role"], "user");
    let image = &user["content"][0];
    assert_eq!((&image["type"], &image["detail"]), (&json!("input_image"), &json!("auto")));
    assert_eq!(bytes_of_url(&image["image_url"]), PNG);
    assert_eq!(user["content"][1]["type"], "input_text");
}

/// Cline's texts for a model without image input, an image too large and one it cannot read,
/// each a failed read (a mistake), on the XML dialect's user message.
#[test]
fn refusals_are_clines_texts() {
    let ws = workspace();
    std::fs::write(ws.path().join("wide.png"), WIDE_PNG).unwrap();
    std::fs::write(ws.path().join("notes.jpg"), "not a JPEG at all\n").unwrap();
    let read = |p: &str| tool("read_file", &[("path", p)]);
    let server = Server::start(vec![
        openai(&read("pixel.png")),
        openai(&completion("no images here")),
        anthropic(&read("wide.png")),
        anthropic(&read("notes.jpg")),
        anthropic(&completion("done")),
    ]);
    let url = server.openai_url();
    // deepseek-chat: Cline's table says it takes no images.
    let base = ["--provider", "openai", "--base-url", &url, "--model", "deepseek-chat", "--tool-calls", "xml"];
    let r = run(ws.path(), &base, &["--yolo", "--no-save", "look"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let said = server.requests()[1].last_user();
    assert!(
        said.starts_with("[read_file for 'pixel.png'] Result:\nThe tool execution failed with the following error:\n<error>\nError reading file: Current model does not support image input\n</error>"),
        "{said}"
    );
    let anthropic_url = server.anthropic_url();
    let base =
        ["--provider", "anthropic", "--base-url", &anthropic_url, "--model", "claude-test", "--tool-calls", "xml"];
    let r = run(ws.path(), &base, &["--yolo", "--no-save", "look"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    let wide = reqs[3].last_user();
    assert!(
        wide.contains("<error>\nError reading file: Image dimensions exceed 7500px by 7500px, so image could not be read\n</error>"),
        "{wide}"
    );
    let notes = reqs[4].last_user();
    assert!(
        notes.contains("<error>\nError reading file: Error reading image: unsupported file type: undefined\n</error>"),
        "{notes}"
    );
    // No image went with a refusal.
    for q in &reqs[3..] {
        assert!(!q.body.to_string().contains("\"image\""), "{}", q.body);
    }
}

#[test]
fn a_server_that_refuses_images_is_asked_again_with_them_named_and_the_run_goes_on() {
    // llama-server without --mmproj refuses every request holding an image; Cline fails there,
    // and on every later request of the task.
    let ws = workspace();
    let read = |p: &str| tool("read_file", &[("path", p)]);
    let server = Server::start_text_only(vec![
        openai(&read("pixel.png")),
        openai(&read("pixel.png")),
        openai(&completion("done")),
    ]);
    let url = server.openai_url();
    let base = ["--provider", "openai", "--base-url", &url, "--model", "local-model", "--tool-calls", "xml"];
    let r = run(ws.path(), &base, &["--yolo", "--no-save", "--json", "look"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4, "the refused request and its retry, then the rest: {}", r.all());
    assert!(reqs[1].body.to_string().contains("image_url"), "the model was first sent the image");
    let retry = reqs[2].body.to_string();
    assert!(!retry.contains("image_url"), "{retry}");
    let said = reqs[2].last_user();
    assert!(said.starts_with(RESULT), "{said}");
    assert!(
        said.ends_with(
            "</environment_details>\n\n[Image not sent (image/png, 2x1 pixels): this server takes text only]"
        ),
        "{said}"
    );
    assert!(
        r.stderr.contains("The server refused the request for its image (image input is not supported"),
        "{}",
        r.stderr
    );
    let events = events::parse(&r.stdout);
    let notices = events::of(&events, "notice");
    assert!(notices.iter().any(|n| n["kind"] == "images_refused"), "{notices:?}");
    // The second read: refused as for a model without image input, with nothing to refuse.
    let second = reqs[3].last_user();
    assert!(second.contains("Error reading file: Current model does not support image input"), "{second}");
    assert!(!reqs[3].body.to_string().contains("image_url"));

    // --no-images: Cline's refusal from the first read, no request refused.
    let server = Server::start_text_only(vec![openai(&read("pixel.png")), openai(&completion("done"))]);
    let url = server.openai_url();
    let base = ["--provider", "openai", "--base-url", &url, "--model", "local-model", "--tool-calls", "xml"];
    let r = run(ws.path(), &base, &["--yolo", "--no-save", "--no-images", "look"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[1].last_user().contains("Current model does not support image input"));
}

#[test]
fn images_the_conversation_holds_are_bounded_in_bytes_not_pixels() {
    // A 1x1 image padded to 3.9 MB (5.2 MB in base64) counts as one token for the context
    // window: read again and again, it went into every request and the saved task without end.
    let ws = tempfile::tempdir().unwrap();
    let mut big = PNG.to_vec();
    big.resize(3_900_000, 0);
    for n in 1..=6 {
        std::fs::write(ws.path().join(format!("big{n}.png")), &big).unwrap();
    }
    let args: Vec<String> = (1..=6).map(|n| format!(r#"{{"path":"big{n}.png"}}"#)).collect();
    let read = |n: usize, id: &'static str| call(id, "read_file", &[args[n - 1].as_str()]);
    let server = Server::start(vec![
        completes(vec![
            read(1, "toolu_1"),
            read(2, "toolu_2"),
            read(3, "toolu_3"),
            read(4, "toolu_4"),
            read(5, "toolu_5"),
        ]),
        completes(vec![read(6, "toolu_6")]),
        completes(vec![call("toolu_7", "attempt_completion", &[r#"{"result":"seen"}"#])]),
    ]);
    let url = server.anthropic_url();
    let base = ["--provider", "anthropic", "--base-url", &url, "--model", "claude-sonnet-4-5", "--yolo"];
    let r = run(ws.path(), &base, &["--no-save", "look"]);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let images = |body: &Value| body.to_string().matches(r#""type":"image""#).count();
    // Four, 20.8 MB in base64, are held: a fifth is refused, in the same reply or a later one.
    let refused = "Error reading file: the conversation already holds 19.8 MB of images, and this one (5.0 MB) would take it past 20.0 MB";
    assert_eq!(images(&reqs[1].body), 4);
    let fifth = reqs[1].body["messages"].as_array().unwrap().last().unwrap()["content"][4]["content"].to_string();
    assert!(fifth.contains(refused), "{fifth}");
    assert_eq!(images(&reqs[2].body), 4);
    let said = reqs[2].last_user();
    assert!(said.contains(refused), "{said}");
}

/// A task stopped before the request that carries the image keeps it for `resume`; a resumed
/// task sends the images of its history again; the save says version 2.
#[test]
fn a_saved_task_sends_its_images_again_on_resume() {
    let ws = workspace();
    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().display().to_string();
    let server = Server::start(vec![
        completes(vec![call("toolu_1", "read_file", &[r#"{"path":"pixel.png"}"#])]),
        completes(vec![call("toolu_2", "list_files", &[r#"{"path":"."}"#])]),
        completes(vec![call("toolu_3", "attempt_completion", &[r#"{"result":"seen"}"#])]),
    ]);
    let url = server.anthropic_url();
    let base = ["--provider", "anthropic", "--base-url", &url, "--model", "claude-sonnet-4-5", "--yolo"];
    let r = run(ws.path(), &base, &["--state-dir", &state_dir, "--max-turns", "1", "look"]);
    assert_eq!(r.code, Some(1), "{}", r.all());
    assert_eq!(server.requests().len(), 1);
    let saved = saved_file(state.path());
    assert_eq!(saved["version"], 2);
    assert_eq!(saved["pending_parts"][0]["type"], "image");
    assert_eq!(bytes_of(&saved["pending_parts"][0]["data"]), PNG);

    let resume = ["--last", "--state-dir", &state_dir, "--yolo", "--max-turns", "1"];
    let r = run_cmd("resume", ws.path(), &resume, &[("ANTHROPIC_API_KEY", KEY)], LIMIT);
    assert_eq!(r.code, Some(1), "{}", r.all());
    let image_of = |msg: &Value| {
        let blocks = msg["content"].as_array().unwrap();
        assert_eq!(blocks[0]["type"], "tool_result", "{msg}");
        let image = blocks.iter().find(|b| b["type"] == "image").unwrap_or_else(|| panic!("no image in {msg}"));
        bytes_of(&image["source"]["data"])
    };
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    assert_eq!(image_of(&msgs[2]), PNG);

    let r = run_cmd("resume", ws.path(), &resume, &[("ANTHROPIC_API_KEY", KEY)], LIMIT);
    assert_eq!(r.code, Some(0), "{}", r.all());
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let msgs = reqs[2].body["messages"].as_array().unwrap();
    assert_eq!(image_of(&msgs[2]), PNG, "the history's image goes again");
    assert_eq!(msgs.iter().filter(|m| m.to_string().contains("\"image\"")).count(), 1);
}

/// The one saved task's file.
fn saved_file(state: &Path) -> Value {
    let dir = state.join("tasks");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

/// The scripted server refuses what the real APIs refuse of an image, so the tests above would
/// catch a wrong shape.
#[test]
fn the_scripted_server_refuses_what_the_apis_refuse_of_images() {
    let url = format!("data:image/png;base64,{}", "iVBORw0KGgoAAAANSUhEUg==");
    let png_part = json!({"type": "image_url", "image_url": {"url": url}});
    let in_tool = json!({"messages": [
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": [png_part]},
    ]});
    let refused = |path: &str, body: &Value| native::check(path, body).map(|e| e.to_string()).unwrap_or_default();
    assert!(
        refused("/v1/chat/completions", &in_tool).contains("Image URLs are only allowed for messages with role 'user'")
    );
    let as_object = json!({"input": [{"role": "user", "content": [{"type": "input_image", "detail": "auto", "image_url": {"url": url}}]}]});
    assert!(refused("/v1/responses", &as_object).contains("expected a string"));
    let jpeg_as_png = json!({"messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "/9j/4AAQ"}}
    ]}]});
    assert!(refused("/v1/messages", &jpeg_as_png).contains("appears to be a image/jpeg image"));
    let ollama_url = json!({"messages": [{"role": "user", "content": "x", "images": [url]}]});
    assert!(refused("/api/chat", &ollama_url).contains("illegal base64"));
}
