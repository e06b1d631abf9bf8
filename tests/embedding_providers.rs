//! Embedding providers over HTTP, against a mock server on loopback: the OpenAI-compatible and
//! Ollama request shapes, the bearer key from the named environment variable, batching,
//! retries on 503, clear errors, the read timeout of an endpoint that never answers, and a
//! whole `ken index build --embedder openai` + `ken search --semantic` run that stores the
//! provider settings (never the key) and re-embeds only what changed.

mod support;

use std::net::TcpListener;

use kenning::providers::{EmbedApi, EmbedderSettings, HttpEmbedder, ProviderError};
use kenning::vector::Embedder;
use support::{materialize, stderr, stdout};

type Mock = support::mock_server::MockServer;

/// A deterministic "model": 16 dimensions counting words by a hash of the lowercased word, so
/// texts sharing words are near each other.
fn fake_vector(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; 16];
    for w in text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 2) {
        let h = w
            .to_lowercase()
            .bytes()
            .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
        v[(h % 16) as usize] += 1.0;
    }
    v[0] += 0.01;
    v
}

/// Serves `/v1/embeddings` (OpenAI shape) and `/api/embed` (Ollama shape); the first
/// `fail_first` requests get 503.
fn mock(fail_first: usize) -> Mock {
    support::mock_server::serve(move |n, path, body| {
        if n <= fail_first {
            return (503, "overloaded".to_string());
        }
        let texts: Vec<String> = body["input"]
            .as_array()
            .map(|a| a.iter().map(|t| t.as_str().unwrap_or("").to_string()).collect())
            .unwrap_or_default();
        let vectors: Vec<Vec<f32>> = texts.iter().map(|t| fake_vector(t)).collect();
        match path {
            "/v1/embeddings" => {
                // Out of order, as the API allows: `index` says where each belongs.
                let data: Vec<_> = vectors
                    .iter()
                    .enumerate()
                    .rev()
                    .map(|(i, v)| serde_json::json!({ "object": "embedding", "index": i, "embedding": v }))
                    .collect();
                (
                    200,
                    serde_json::json!({ "object": "list", "data": data }).to_string(),
                )
            }
            "/api/embed" => (
                200,
                serde_json::json!({ "model": body["model"], "embeddings": vectors }).to_string(),
            ),
            _ => (404, "no such endpoint".to_string()),
        }
    })
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn openai_compatible_batches_orders_and_normalizes() {
    let m = mock(0);
    let mut s = EmbedderSettings::new(EmbedApi::Openai, &format!("{}/v1", m.url), "mock-16");
    s.batch = 3;
    let e = HttpEmbedder::connect(s).unwrap();
    assert_eq!(e.dim(), 16);
    assert_eq!(e.id(), "openai:mock-16");
    let texts: Vec<String> = (0..7).map(|i| format!("parse config number{i} file")).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let got = e.embed(&refs).unwrap();
    assert_eq!(got.len(), 7);
    for (t, v) in texts.iter().zip(&got) {
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "not normalized: {norm}");
        let want = fake_vector(t);
        let wn: f32 = want.iter().map(|x| x * x).sum::<f32>().sqrt();
        let want: Vec<f32> = want.iter().map(|x| x / wn).collect();
        assert!(cosine(v, &want) > 0.9999, "vector of {t:?} is someone else's");
    }
    let seen = m.seen.lock().unwrap();
    // The probe, then 7 texts in batches of 3.
    let sizes: Vec<usize> = seen
        .iter()
        .map(|s| s.body["input"].as_array().unwrap().len())
        .collect();
    let mut batches = sizes[1..].to_vec();
    batches.sort();
    assert_eq!(batches, vec![1, 3, 3], "{sizes:?}");
    assert!(
        seen.iter()
            .all(|s| s.path == "/v1/embeddings" && s.body["model"] == "mock-16")
    );
    assert!(
        seen.iter().all(|s| s.authorization.is_none()),
        "no key was configured"
    );
}

#[test]
fn ollama_shape_with_key_and_retries_after_503() {
    let m = mock(2);
    // SAFETY-free: the variable is unique to this test.
    unsafe_free_set_env("KEN_TEST_OLLAMA_KEY", "s3cret");
    let mut s = EmbedderSettings::new(EmbedApi::Ollama, &m.url, "nomic-embed-text");
    s.key_env = Some("KEN_TEST_OLLAMA_KEY".into());
    let e = HttpEmbedder::connect(s).unwrap();
    assert_eq!(e.id(), "ollama:nomic-embed-text");
    let v = e.embed(&["retry the request", "render a template"]).unwrap();
    assert_eq!(v.len(), 2);
    let seen = m.seen.lock().unwrap();
    assert_eq!(seen.len(), 4, "two 503s retried, then the probe and the batch");
    assert!(seen.iter().all(|s| s.path == "/api/embed"));
    assert!(
        seen.iter()
            .all(|s| s.authorization.as_deref() == Some("Bearer s3cret"))
    );
}

/// `std::env::set_var` is unsafe in edition 2024 and this crate denies unsafe code in `src/`
/// only; tests set a variable no other test reads.
fn unsafe_free_set_env(key: &str, value: &str) {
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var(key, value)
    };
}

#[test]
fn errors_name_the_url_status_or_variable() {
    let m = mock(0);
    let s = EmbedderSettings::new(EmbedApi::Openai, &format!("{}/wrong", m.url), "m");
    let err = HttpEmbedder::connect(s).err().unwrap();
    assert!(matches!(err, ProviderError::Status { status: 404, .. }), "{err}");
    assert!(err.to_string().contains("/wrong/embeddings"), "{err}");

    let mut s = EmbedderSettings::new(EmbedApi::Openai, &format!("{}/v1", m.url), "m");
    s.key_env = Some("KEN_TEST_UNSET_VARIABLE".into());
    let err = HttpEmbedder::connect(s).err().unwrap();
    assert!(err.to_string().contains("KEN_TEST_UNSET_VARIABLE"), "{err}");

    // Nothing listening: a transport error after the retries, naming the URL.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let s = EmbedderSettings::new(EmbedApi::Ollama, &url, "m");
    let err = HttpEmbedder::connect(s).err().unwrap();
    assert!(matches!(err, ProviderError::Transport { .. }), "{err}");
    assert!(err.to_string().contains(&url), "{err}");
}

#[test]
fn an_endpoint_that_never_answers_fails_at_the_read_timeout_naming_it() {
    let silent = support::mock_server::SilentServer::start();
    let mut s = EmbedderSettings::new(EmbedApi::Openai, &format!("{}/v1", silent.url), "m");
    s.timeout_secs = 1;
    let started = std::time::Instant::now();
    let err = HttpEmbedder::connect(s).err().unwrap();
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(3), "{took:?}");
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("{}/v1/embeddings: ", silent.url)),
        "{text}"
    );
    assert!(text.contains("sent nothing for 1 s (the read timeout)"), "{text}");
    // Silence is not asked again: it would only multiply the wait.
    assert_eq!(silent.requests.load(std::sync::atomic::Ordering::SeqCst), 1);
}

const REPO: &str = r#"
//- src/network.py
def retry_request(url, attempts=3):
    """Sends the request again when the connection drops."""
    for _ in range(attempts):
        send(url)
//- src/render.py
def render_template(name, context):
    """Fills an HTML template with values."""
    return engine.render(name, context)
//- src/auth.py
def check_password(user, password):
    """Compares a password with the stored hash."""
    return verify(user.hash, password)
"#;

fn ken_with_key(args: &[&str], cwd: &std::path::Path) -> std::process::Output {
    std::process::Command::new(support::ken_bin())
        .args(args)
        .current_dir(cwd)
        .env("KEN_TEST_PROVIDER_KEY", "k-123")
        .output()
        .unwrap()
}

#[test]
fn ken_builds_and_searches_with_a_served_model_and_keeps_its_settings() {
    let m = mock(0);
    let repo = materialize(REPO);
    let url = format!("{}/v1", m.url);
    let args = [
        "index",
        "build",
        ".",
        "--embedder",
        "openai",
        "--embed-url",
        &url,
        "--embed-model",
        "mock-16",
        "--embed-key-env",
        "KEN_TEST_PROVIDER_KEY",
        "--json",
    ];
    let out = ken_with_key(&args, repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let part = &v["manifest"]["parts"]["vectors"];
    assert_eq!(part["model"], "openai:mock-16", "{part}");
    assert_eq!(part["dim"], 16);
    assert_eq!(part["embedder"]["key_env"], "KEN_TEST_PROVIDER_KEY");
    let index = std::fs::read_dir(repo.path().join(".kenning")).unwrap();
    for e in walk(index) {
        let bytes = std::fs::read(&e).unwrap();
        assert!(
            !bytes.windows(5).any(|w| w == b"k-123"),
            "the key was written to {}",
            e.display()
        );
    }
    let texts_sent = |m: &Mock| -> usize {
        m.seen
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.body["input"].as_array().map_or(0, Vec::len))
            .sum()
    };
    let first = texts_sent(&m);
    assert!(first >= 4, "probe plus the chunks: {first}");
    assert!(
        m.seen
            .lock()
            .unwrap()
            .iter()
            .all(|s| s.authorization.as_deref() == Some("Bearer k-123"))
    );

    // Search embeds the query with the same provider, read from the index.
    let out = ken_with_key(
        &["search", "--semantic", "compares password stored hash", "--json"],
        repo.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["chunks"][0]["path"], "src/auth.py", "{v}");

    // A plain rebuild after one edit keeps the provider and sends only the changed chunk.
    let before = texts_sent(&m);
    std::fs::write(
        repo.path().join("src/render.py"),
        "def render_page(name):\n    \"\"\"Renders a whole page.\"\"\"\n    return name\n",
    )
    .unwrap();
    let out = ken_with_key(&["index", "build", ".", "--json"], repo.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["manifest"]["parts"]["vectors"]["model"], "openai:mock-16");
    assert_eq!(v["manifest"]["parts"]["vectors"]["chunks_embedded"], 1);
    assert_eq!(texts_sent(&m) - before, 2, "the probe and the one changed chunk");

    // Back to the built-in model: everything is embedded again, with no requests.
    let before = texts_sent(&m);
    let out = ken_with_key(
        &["index", "build", ".", "--embedder", "builtin", "--json"],
        repo.path(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let part = &v["manifest"]["parts"]["vectors"];
    assert_eq!(part["model"], kenning::vector::BUILTIN_MODEL_ID, "{part}");
    assert_eq!(part["chunks_embedded"], part["chunks"], "{part}");
    assert_eq!(texts_sent(&m), before);
}

fn walk(dir: std::fs::ReadDir) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in dir.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(std::fs::read_dir(&p).unwrap()));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn the_public_embedding_endpoint_without_its_key_is_refused_before_any_request() {
    let repo = materialize(REPO);
    let out = std::process::Command::new(support::ken_bin())
        .args([
            "index",
            "build",
            ".",
            "--embedder",
            "openai",
            "--embed-model",
            "m",
        ])
        .current_dir(repo.path())
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("OPENAI_API_KEY") && err.contains("nothing was sent"),
        "{err}"
    );
}
