//! Asking a model server what it says of itself. Its context window, where it says it:
//! llama.cpp's `llama-server` (`GET /props`, `default_generation_settings.n_ctx`), LM Studio
//! (`GET /api/v0/models`, the model's `loaded_context_length`, else `max_context_length`),
//! Ollama's OpenAI-compatible endpoint (`POST /api/show`, `model_info.<arch>.context_length`)
//! and vLLM (`GET /v1/models`, the model's `max_model_len`). Only the OpenAI-compatible provider
//! on this machine is asked (Ollama's own API runs the `num_ctx` agent-min sends); a server that
//! says nothing (llama-cpp-python) leaves the caller to its fallback. Away from this machine,
//! only OpenRouter is asked, for a model in none of Cline's tables: its public model list
//! (`GET {base}/models`, no key, each model's `context_length`), where Cline's OpenRouter
//! provider reads every model's facts (`refreshOpenRouterModels.ts`). And whether it is llama-cpp-python (`GET /v1/models`, whose entries
//! it says are `owned_by: "me"`): its built-in chat formats read a message's content only as a
//! string, and render Cline's list of text parts as nothing.

use serde_json::Value;

use super::curl;
use super::providers::Provider;

/// Seconds each question may take to connect, and to go without a byte.
const TIMEOUT: u32 = 3;

/// Most bytes of an answer read.
const MAX_ANSWER: usize = 1 << 20;

/// Most bytes of OpenRouter's model list read (hundreds of models, each with its description).
const MAX_LIST: usize = 16 << 20;

/// The window a server said, and where it said it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Said {
    /// Tokens.
    pub tokens: u64,
    /// Which question answered (`llama.cpp /props`, …).
    pub source: &'static str,
}

/// Whether `base_url` is a server on this machine (the only kind asked).
pub(crate) fn is_local(base_url: &str) -> bool {
    let rest = base_url.split_once("://").map_or(base_url, |(_, r)| r);
    let host = rest.split(['/', '?']).next().unwrap_or("");
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    host == "localhost" || host == "::1" || host == "0.0.0.0" || host.starts_with("127.")
}

/// Asks the local server at `base_url` (the provider's, with or without `/v1`) for `model`'s
/// context window. `None`: not a local server, or it did not say.
pub(crate) fn ask(provider: Provider, base_url: &str, model: &str) -> Option<Said> {
    if !is_local(base_url) {
        return None;
    }
    let root = root(base_url);
    // Ollama's own API gets the window agent-min asks for (`num_ctx`); nothing to ask.
    if provider != Provider::OpenAi {
        return None;
    }
    if let Some(tokens) = fetch(&format!("{root}/props"), None).and_then(|v| llama_props(&v)) {
        return Some(Said { tokens, source: "llama.cpp's /props" });
    }
    if let Some(tokens) = fetch(&format!("{root}/api/v0/models"), None).and_then(|v| lm_studio(&v, model)) {
        return Some(Said { tokens, source: "LM Studio's model list" });
    }
    // Ollama's OpenAI-compatible endpoint: the model's own window (Ollama may run it smaller).
    let body = serde_json::json!({ "model": model }).to_string();
    if let Some(tokens) = fetch(&format!("{root}/api/show"), Some(&body)).and_then(|v| ollama_show(&v)) {
        return Some(Said { tokens, source: "Ollama's /api/show" });
    }
    let tokens = fetch(&format!("{root}/v1/models"), None).and_then(|v| listed(&v, model))?;
    Some(Said { tokens, source: "the server's /v1/models" })
}

/// Asks OpenRouter's public model list (`{base_url}/models`, without the key, as Cline asks it)
/// for `model`'s context window.
pub(crate) fn ask_openrouter(base_url: &str, model: &str) -> Option<Said> {
    let base = base_url.split('?').next().unwrap_or(base_url).trim_end_matches('/');
    let list = fetch_limited(&format!("{base}/models"), None, MAX_LIST)?;
    Some(Said { tokens: listed(&list, model)?, source: "OpenRouter's model list" })
}

/// A model list's window for `model` (OpenAI's shape, `{"data": [{"id": …}, …]}`): vLLM's
/// `max_model_len`, OpenRouter's `context_length`. An OpenRouter id with a routing suffix
/// that the list does not hold (`…:nitro`, `…:floor`) is its model's.
pub(crate) fn listed(v: &Value, model: &str) -> Option<u64> {
    let list = v["data"].as_array()?;
    let find = |id: &str| list.iter().find(|m| m["id"] == id);
    let entry = find(model).or_else(|| model.rsplit_once(':').and_then(|(base, _)| find(base)))?;
    tokens(&entry["max_model_len"]).or_else(|| tokens(&entry["context_length"]))
}

/// Whether the OpenAI-compatible server at `base_url` on this machine is llama-cpp-python, which
/// must be sent each message's content as one string.
pub(crate) fn takes_only_strings(base_url: &str) -> bool {
    if !is_local(base_url) {
        return false;
    }
    fetch(&format!("{}/v1/models", root(base_url)), None).is_some_and(|v| llama_cpp_python(&v))
}

/// llama-cpp-python's `/v1/models`: every entry `owned_by: "me"` with a `permissions` list
/// (llama-server says `llamacpp`, LM Studio `organization_owner`, Ollama `library`).
pub(crate) fn llama_cpp_python(v: &Value) -> bool {
    let Some(list) = v["data"].as_array().filter(|l| !l.is_empty()) else { return false };
    list.iter().all(|m| m["owned_by"] == "me" && m["permissions"].is_array())
}

/// The server's root: `base_url` without a trailing `/` or `/v1`.
fn root(base_url: &str) -> &str {
    // (Without the query an Azure-shaped base URL carries its `api-version` in.)
    let root = base_url.split('?').next().unwrap_or(base_url).trim_end_matches('/');
    root.strip_suffix("/v1").unwrap_or(root)
}

/// One question: a GET (or a POST of `body`), the answer as JSON if it was a 200.
fn fetch(url: &str, body: Option<&str>) -> Option<Value> {
    fetch_limited(url, body, MAX_ANSWER)
}

/// [`fetch`], reading at most `limit` bytes of the answer.
fn fetch_limited(url: &str, body: Option<&str>, limit: usize) -> Option<Value> {
    let headers = [("Content-Type".to_string(), "application/json".to_string())];
    let req = curl::Request {
        url,
        headers: &headers,
        body: body.unwrap_or("").as_bytes(),
        connect_timeout: TIMEOUT,
        idle_timeout: TIMEOUT,
    };
    let mut resp = match body {
        Some(_) => curl::post(&req),
        None => curl::get(&req),
    }
    .ok()?;
    let ok = resp.status == 200;
    let text = resp.read_rest(limit);
    resp.abort();
    ok.then(|| serde_json::from_slice(&text).ok()).flatten()
}

/// A positive token count.
fn tokens(v: &Value) -> Option<u64> {
    v.as_u64().filter(|&n| n > 0)
}

/// llama-server's `/props`.
pub(crate) fn llama_props(v: &Value) -> Option<u64> {
    tokens(&v["default_generation_settings"]["n_ctx"]).or_else(|| tokens(&v["n_ctx"]))
}

/// LM Studio's `/api/v0/models`: the entry for `model` (or the only one).
pub(crate) fn lm_studio(v: &Value, model: &str) -> Option<u64> {
    let list = v["data"].as_array()?;
    let entry = list.iter().find(|m| m["id"] == model).or(if list.len() == 1 { list.first() } else { None })?;
    tokens(&entry["loaded_context_length"]).or_else(|| tokens(&entry["max_context_length"]))
}

/// Ollama's `/api/show`: the architecture's `context_length`.
pub(crate) fn ollama_show(v: &Value) -> Option<u64> {
    let info = v["model_info"].as_object()?;
    info.iter().find(|(k, _)| k.ends_with(".context_length")).and_then(|(_, n)| tokens(n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_servers_on_this_machine_are_asked() {
        for url in ["http://127.0.0.1:8080/v1", "http://localhost:11434", "http://[::1]:1234/v1", "http://0.0.0.0:8000"]
        {
            assert!(is_local(url), "{url}");
        }
        for url in ["https://api.openai.com/v1", "http://10.0.0.2:8080/v1", "https://localhost.example.com/v1"] {
            assert!(!is_local(url), "{url}");
        }
    }

    #[test]
    fn each_server_says_it_its_own_way() {
        // llama-server's /props (as b5000-era builds answer it).
        let props = json!({"default_generation_settings": {"n_ctx": 32768, "params": {}}, "total_slots": 1});
        assert_eq!(llama_props(&props), Some(32768));
        assert_eq!(llama_props(&json!({"error": {"code": 404}})), None);
        // LM Studio's REST API.
        let lms = json!({"object": "list", "data": [
            {"id": "qwen2.5-7b-instruct", "state": "loaded", "max_context_length": 32768, "loaded_context_length": 4096},
            {"id": "other", "state": "not-loaded", "max_context_length": 8192}
        ]});
        assert_eq!(lm_studio(&lms, "qwen2.5-7b-instruct"), Some(4096), "the loaded window, not the most");
        assert_eq!(lm_studio(&lms, "other"), Some(8192));
        assert_eq!(lm_studio(&lms, "missing"), None);
        // llama-cpp-python's /v1/models (0.3.x), and the others' answers to the same question.
        let models = json!({"object": "list", "data": [{"id": "local", "object": "model", "owned_by": "me", "permissions": []}]});
        assert!(llama_cpp_python(&models));
        let llama_server = json!({"object": "list", "data": [{"id": "m.gguf", "object": "model", "created": 1, "owned_by": "llamacpp", "meta": {}}]});
        let ollama = json!({"object": "list", "data": [{"id": "qwen2.5-coder:7b", "object": "model", "created": 1, "owned_by": "library"}]});
        for other in [llama_server, ollama, json!({"object": "list", "data": []}), json!({"error": "x"})] {
            assert!(!llama_cpp_python(&other), "{other}");
        }
        // Ollama's /api/show.
        let show = json!({"model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}});
        assert_eq!(ollama_show(&show), Some(32768));
        assert_eq!(ollama_show(&json!({"model_info": {}})), None);
        // vLLM's /v1/models (its ModelCard).
        let vllm = json!({"object": "list", "data": [{"id": "Qwen/Qwen3-8B", "object": "model", "owned_by": "vllm", "root": "Qwen/Qwen3-8B", "max_model_len": 40960}]});
        assert_eq!(listed(&vllm, "Qwen/Qwen3-8B"), Some(40960));
        assert_eq!(listed(&vllm, "other"), None);
        assert!(!llama_cpp_python(&vllm));
    }

    #[test]
    fn openrouters_model_list_says_each_models_context_length() {
        // The shape of OpenRouter's `GET /api/v1/models` (its Models API schema).
        let list = json!({"data": [
            {"id": "google/gemini-2.5-pro", "canonical_slug": "google/gemini-2.5-pro", "name": "Google: Gemini 2.5 Pro",
             "context_length": 1048576, "architecture": {"modality": "text+image->text"},
             "pricing": {"prompt": "0.00000125", "completion": "0.00001"},
             "top_provider": {"context_length": 1048576, "max_completion_tokens": 65536, "is_moderated": false}},
            {"id": "qwen/qwen3-coder:free", "context_length": 262144},
            {"id": "qwen/qwen3-coder", "context_length": 262000},
            {"id": "broken/model", "context_length": null}
        ]});
        assert_eq!(listed(&list, "google/gemini-2.5-pro"), Some(1_048_576));
        assert_eq!(listed(&list, "qwen/qwen3-coder:free"), Some(262_144), "a variant the list holds is its own");
        assert_eq!(listed(&list, "qwen/qwen3-coder:nitro"), Some(262_000), "a routing suffix is its model's");
        assert_eq!((listed(&list, "broken/model"), listed(&list, "missing/model")), (None, None));
    }

    #[test]
    fn openrouters_whole_list_is_asked_for_without_a_key() {
        use std::io::{BufRead, BufReader, Write};
        // A list larger than the other questions' answers may be (hundreds of models, each
        // with its description), the model asked for at its end.
        let filler: Vec<Value> = (0..600)
            .map(|i| json!({"id": format!("vendor/m{i}"), "description": "d".repeat(3000), "context_length": 4096}))
            .collect();
        let mut data = filler;
        data.push(json!({"id": "z-ai/glm-4.6", "context_length": 202752}));
        let body = json!({ "data": data }).to_string();
        assert!(body.len() > MAX_ANSWER);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let mut conn = BufReader::new(listener.incoming().next().unwrap().unwrap());
            let mut head = Vec::new();
            loop {
                let mut line = String::new();
                conn.read_line(&mut line).unwrap();
                if line.trim().is_empty() {
                    break;
                }
                head.push(line.trim().to_string());
            }
            let answer = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
            conn.get_mut().write_all(answer.as_bytes()).unwrap();
            head
        });
        let said = ask_openrouter(&format!("http://127.0.0.1:{port}/api/v1/"), "z-ai/glm-4.6");
        let head = server.join().unwrap();
        assert_eq!(said, Some(Said { tokens: 202_752, source: "OpenRouter's model list" }));
        assert!(head[0].starts_with("GET /api/v1/models "), "{head:?}");
        assert!(!head.iter().any(|h| h.to_ascii_lowercase().starts_with("authorization")), "{head:?}");
    }
}
